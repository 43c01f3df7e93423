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

	// Runs (API.md §3), when a runtime is wired in.
	if s.runtime != nil {
		s.Handle("POST /api/runs", s.handleRunCreate)
		s.Handle("GET /api/runs/{uuid}", s.handleRunGet)
		s.Handle("GET /api/runs/{uuid}/events", s.handleRunEvents)
		s.Handle("POST /api/runs/{uuid}/approval", s.handleRunApproval)
		s.Handle("POST /api/runs/{uuid}/input", s.handleRunInput)
		s.Handle("POST /api/runs/{uuid}/cancel", s.handleRunCancel)
		s.Handle("POST /api/runs/{uuid}/cancel-if-waiting", s.handleRunCancelIfWaiting)
		s.Handle("GET /api/inbox", s.handleInbox)
	}
}
