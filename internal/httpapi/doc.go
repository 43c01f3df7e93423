// Package httpapi is the HTTP skeleton of Waymark (API.md §3): the server,
// its middleware (request id, access log, metrics, panic recovery,
// authentication by bearer token or session cookie with CSRF header), the one
// adapter that turns handler errors into {"error": {"code", "message"}}
// answers, JSON helpers, graceful serving, and the operational routes
// (/api/me, /api/login, /api/logout, /healthz, /readyz, /metrics).
//
// Handlers have the type HandlerFunc and return errors; every route is
// registered in routes.go, one handler per file.
//
// # Errors
//
// A handler returns the domain's error as it is. Domain packages declare
// their errors with package fault (kind, wire code, safe message); the one
// adapter, writeError, finds the fault of an error (fault.Of), answers with
// the status of its kind (statusOf in errors.go, the only place kinds
// become statuses), the code and the message, and logs the whole error with
// the request id. An error that carries no fault — a failed query, a closed
// database — is 500 internal with a message naming only the request id:
// infrastructure failures are never answered as a domain answer.
// httpapi declares only its own faults (bad_request, not_found of
// a path, csrf, body_too_large, not_ready …) and adds detail with With.
// Classify gives the web UI the same status and code. Every code is listed
// in docs/API.md "Errors"; TestEveryWireCodeIsDocumented keeps the two
// lists equal.
package httpapi
