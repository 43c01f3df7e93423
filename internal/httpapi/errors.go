package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"waymark/internal/fault"
	"waymark/internal/store"
)

// The faults httpapi itself answers with (the domains declare theirs in
// their packages); each is sent with a detail through With, e.g.
// errBadRequest.With("limit: want 1 to %d", max).
var (
	errBadRequest         = fault.New(fault.Invalid, "bad_request", "bad request")
	errInvalid            = fault.New(fault.Invalid, "invalid", "invalid") // an administration body naming a field wrong
	errNotFound           = fault.New(fault.NotFound, "not_found", "not found")
	errMethodNotAllowed   = fault.New(fault.MethodNotAllowed, "method_not_allowed", "method not allowed")
	errNotAcceptable      = fault.New(fault.NotAcceptable, "not_acceptable", "streaming is not supported on this connection")
	errCSRF               = fault.New(fault.Forbidden, "csrf", "missing or wrong "+CSRFHeader+" header")
	errBodyTooLarge       = fault.New(fault.TooLarge, "body_too_large", "request body larger than 1 MiB")
	errNotReady           = fault.New(fault.Unavailable, "not_ready", "not ready")
	errTooManyAttempts    = fault.New(fault.TooMany, "too_many_attempts", "too many failed logins; try again later")
	errTooManyConnections = fault.New(fault.TooMany, "too_many_connections", "too many connections from your address")
)

// statusOf is the HTTP status of every fault kind: the one place kinds
// become statuses. A kind without a status is a bug that
// TestEveryKindHasAStatus catches.
var statusOf = map[fault.Kind]int{
	fault.Internal:         http.StatusInternalServerError,
	fault.Invalid:          http.StatusBadRequest,
	fault.Unauthenticated:  http.StatusUnauthorized,
	fault.Forbidden:        http.StatusForbidden,
	fault.NotFound:         http.StatusNotFound,
	fault.MethodNotAllowed: http.StatusMethodNotAllowed,
	fault.NotAcceptable:    http.StatusNotAcceptable,
	fault.Conflict:         http.StatusConflict,
	fault.TooLarge:         http.StatusRequestEntityTooLarge,
	fault.Unprocessable:    http.StatusUnprocessableEntity,
	fault.TooMany:          http.StatusTooManyRequests,
	fault.Unavailable:      http.StatusServiceUnavailable,
}

// StatusOf is the HTTP status of a fault kind (500 for an unknown kind).
func StatusOf(k fault.Kind) int {
	if s, ok := statusOf[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// errorBody is the JSON of every error answer.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// classify maps a handler error to what the client sees by its fault's kind
// (package fault). An error without a fault, or an Internal one, is
// internal: the client gets a safe message naming the request id.
func classify(err error, requestID string) (status int, code, msg string) {
	f, msg, ok := fault.Of(err)
	if !ok || f.Kind() == fault.Internal {
		return http.StatusInternalServerError, "internal", "internal error (request " + requestID + ")"
	}
	return StatusOf(f.Kind()), f.Code(), msg
}

// writeError is the one adapter from handler errors to HTTP: it logs the
// detail with the request id and sends the client only the safe message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	info := infoFrom(r.Context())
	id := info.id
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		s.logger.Debug("client went away", "request_id", id, "err", err)
		info.status = 499 // nobody reads the answer; the access log shows why
		return
	}
	status, code, msg := classify(err, id)
	if status == http.StatusInternalServerError && s.dbUnavailable(r.Context(), err) {
		status, code, msg = StatusOf(fault.Unavailable), store.ErrUnavailable.Code(), store.ErrUnavailable.Message()
		w.Header().Set("Retry-After", strconv.Itoa(dbRetryAfter))
	}
	level := slog.LevelDebug
	if status >= 500 {
		level = slog.LevelError
	}
	s.logger.Log(r.Context(), level, "request failed", "request_id", id, "status", status, "code", code, "err", err)
	if info.wroteHeader {
		return // too late to answer; the log above has it
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", Challenge)
	}
	writeErrorBody(w, status, code, msg)
}

// Challenge is the WWW-Authenticate of every 401: a bearer token, an API
// token made in Waymark, is what is asked for. It names no
// resource_metadata, and says that no OAuth authorization is offered, so
// an OAuth-capable client (an MCP client) is not sent looking for one.
const Challenge = `Bearer realm="waymark", error_description="send an API token made in Waymark (Authorization: Bearer); OAuth authorization is not offered"`

// WriteError is the one error writer for handlers of other packages
// mounted on the server (MCP's /mcp): the same status, body, log line and
// WWW-Authenticate as the API's own answers.
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	s.writeError(w, r, err)
}

// dbRetryAfter is the Retry-After, in seconds, of a 503 database_unavailable.
const dbRetryAfter = 2

// dbPingTimeout bounds the ping with which an internal error is checked
// against the database.
const dbPingTimeout = time.Second

// dbUnavailable reports whether the internal error err came from a database
// that does not answer: err says it could not be reached
// (store.Unreachable), or a ping now fails so. Such a request is answered
// 503 database_unavailable with Retry-After, not 500: a client can tell an
// outage it may wait out from a fault of the server. A pool this process
// closed (it is shutting down) is not an outage: 500.
func (s *Server) dbUnavailable(ctx context.Context, err error) bool {
	if store.Unreachable(err) {
		return true
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dbPingTimeout)
	defer cancel()
	return store.Unreachable(s.db.SQL.PingContext(pctx))
}

func writeErrorBody(w http.ResponseWriter, status int, code, msg string) {
	var b errorBody
	b.Error.Code, b.Error.Message = code, msg
	_ = WriteJSON(w, status, b)
}
