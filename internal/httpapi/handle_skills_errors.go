package httpapi

import (
	"errors"
	"net/http"

	"waymark/internal/skill"
)

// skillError maps the skill store's errors to HTTP; nil when err is none of
// them. Messages name only what the request named (uids, digests, lines).
func skillError(err error) *Error {
	var refused *skill.RefusedError
	var parse *skill.ParseError
	switch {
	case errors.As(err, &refused):
		e := &Error{Status: http.StatusConflict, Code: string(refused.Case), Message: refused.Error(), Err: err}
		switch refused.Case {
		case skill.RefusedDenied:
			e.Status, e.Code, e.Message = http.StatusForbidden, "forbidden", "only administrators and skill approvers may approve or revoke skills"
		case skill.RefusedUnknownDigest:
			e.Status = http.StatusNotFound
		}
		return e
	case errors.As(err, &parse):
		return &Error{Status: http.StatusBadRequest, Code: "invalid_skill", Message: "SKILL.md " + parse.Error(), Err: err}
	case errors.Is(err, skill.ErrSourceUnreadable):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "source_unreadable",
			Message: "the skill source's folder is missing or unreadable; nothing changed", Err: err}
	case errors.Is(err, skill.ErrInvalid):
		return &Error{Status: http.StatusBadRequest, Code: "invalid_skill", Message: err.Error(), Err: err}
	case errors.Is(err, skill.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: err.Error(), Err: err}
	}
	return nil
}
