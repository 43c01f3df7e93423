package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"waymark/internal/access"
	"waymark/internal/auth"
	"waymark/internal/store"
)

// Error is an error a handler returns to answer with a given status, code
// and message. Message is shown to the client; Err is only logged.
type Error struct {
	Status  int    // HTTP status
	Code    string // snake_case, stable, e.g. "not_found"
	Message string // one line for the client
	Err     error  // the cause, logged and never sent
}

// Errorf returns an *Error with a formatted message and no cause.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// errorBody is the JSON of every error answer.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// classify maps a handler error to what the client sees. Unknown errors are
// internal: the client gets a safe message naming the request id.
func classify(err error, requestID string) (status int, code, msg string) {
	var he *Error
	if ae := agentError(err); ae != nil {
		he = ae
	} else if ce := chatError(err); ce != nil {
		he = ce
	} else if se := skillError(err); se != nil {
		he = se
	} else if ae := adminError(err); ae != nil {
		he = ae
	}
	switch {
	case he != nil || errors.As(err, &he):
		return he.Status, he.Code, he.Message
	case errors.Is(err, store.ErrInvalidText):
		return http.StatusBadRequest, "invalid_text", store.ErrInvalidText.Error()
	case errors.Is(err, auth.ErrUnauthenticated):
		return http.StatusUnauthorized, "unauthenticated", "authentication required"
	case errors.Is(err, access.ErrDenied):
		return http.StatusForbidden, "forbidden", "permission denied"
	default:
		return http.StatusInternalServerError, "internal", "internal error (request " + requestID + ")"
	}
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
	level := slog.LevelDebug
	if status >= 500 {
		level = slog.LevelError
	}
	s.logger.Log(r.Context(), level, "request failed", "request_id", id, "status", status, "code", code, "err", err)
	if info.wroteHeader {
		return // too late to answer; the log above has it
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="waymark"`)
	}
	writeErrorBody(w, status, code, msg)
}

func writeErrorBody(w http.ResponseWriter, status int, code, msg string) {
	var b errorBody
	b.Error.Code, b.Error.Message = code, msg
	_ = WriteJSON(w, status, b)
}
