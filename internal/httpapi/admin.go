package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"waymark/internal/access"
	"waymark/internal/llmconfig"
)

// HandleAdmin registers an authenticated route for administrators only: any
// other user gets 403 before h runs, so before any lookup, decoding or
// validation (issue 14) — a non-admin learns nothing about what exists.
func (s *Server) HandleAdmin(pattern string, h HandlerFunc) {
	s.Handle(pattern, func(w http.ResponseWriter, r *http.Request) error {
		if !ActorFrom(r.Context()).IsAdmin() {
			return access.ErrDenied
		}
		return h(w, r)
	})
}

// adminUID reads the uid path value of an administration route; a value that
// is not a positive integer names nothing, so it is 404 like an unknown uid.
func adminUID(r *http.Request) (int64, error) {
	n, err := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	if err != nil || n <= 0 {
		return 0, Errorf(http.StatusNotFound, "not_found", "no such uid %q", r.PathValue("uid"))
	}
	return n, nil
}

// adminError maps the errors of the administration services to HTTP; nil
// when err is none of them. Validation messages name the field.
func adminError(err error) *Error {
	var cfe *llmconfig.FieldError
	var afe *access.FieldError
	switch {
	case errors.As(err, &cfe):
		return &Error{Status: http.StatusBadRequest, Code: "invalid", Message: cfe.Field + ": " + cfe.Reason, Err: err}
	case errors.As(err, &afe):
		return &Error{Status: http.StatusBadRequest, Code: "invalid", Message: afe.Error(), Err: err}
	case errors.Is(err, llmconfig.ErrTaken), errors.Is(err, access.ErrUsernameTaken), errors.Is(err, access.ErrExists):
		return &Error{Status: http.StatusConflict, Code: "conflict", Message: err.Error(), Err: err}
	case errors.Is(err, access.ErrLastAdmin):
		return &Error{Status: http.StatusConflict, Code: "last_admin",
			Message: "the change would leave no active administrator; make another user administrator first", Err: err}
	case errors.Is(err, llmconfig.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such configuration", Err: err}
	case errors.Is(err, access.ErrNoUser):
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such user", Err: err}
	case errors.Is(err, access.ErrNoGroup):
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such group", Err: err}
	}
	return nil
}
