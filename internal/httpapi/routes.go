package httpapi

// routes registers every route of the server; later packages' routes are
// added here too, so that this function lists the whole API.
func (s *Server) routes() {
	// Operations, public.
	s.HandlePublic("GET /healthz", s.handleHealthz)
	s.HandlePublic("GET /readyz", s.handleReadyz)
	s.HandlePublic("GET /metrics", s.handleMetrics())

	// Session.
	s.HandlePublic("POST /api/login", s.handleLogin)
	s.Handle("POST /api/logout", s.handleLogout)
	s.Handle("GET /api/me", s.handleMe)
}
