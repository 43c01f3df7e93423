// Package httpapi is the HTTP skeleton of Waymark (API.md §3): the server,
// its middleware (request id, access log, metrics, panic recovery,
// authentication by bearer token or session cookie with CSRF header), the one
// adapter that turns handler errors into {"error": {"code", "message"}}
// answers, JSON helpers, graceful serving, and the operational routes
// (/api/me, /api/login, /api/logout, /healthz, /readyz, /metrics).
//
// Handlers have the type HandlerFunc and return errors; every route is
// registered in routes.go, one handler per file.
package httpapi
