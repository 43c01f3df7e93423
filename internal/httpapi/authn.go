package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"waymark/internal/access"
	"waymark/internal/auth"
)

// SessionCookie names the cookie of a UI session.
const SessionCookie = "waymark_session"

// CSRFHeader names the header a session-authenticated state-changing request
// must carry, holding the session's CSRF token.
const CSRFHeader = "X-CSRF-Token"

// principal is who a request acts for and by which credential.
type principal struct {
	actor     *access.Actor
	sessionID string // "" for a bearer token
}

type principalKey struct{}

// ActorFrom returns the authenticated user of a request handled by a route
// registered with Handle, loaded fresh for this request; nil elsewhere.
func ActorFrom(ctx context.Context) *access.Actor {
	if p, ok := ctx.Value(principalKey{}).(*principal); ok {
		return p.actor
	}
	return nil
}

func sessionFrom(ctx context.Context) string {
	if p, ok := ctx.Value(principalKey{}).(*principal); ok {
		return p.sessionID
	}
	return ""
}

// authenticate finds the user of a request — bearer token first, then the
// session cookie — loads it as stored now and refuses a missing or disabled
// one. A session-authenticated POST, PUT, PATCH or DELETE also needs the CSRF header.
func (s *Server) authenticate(r *http.Request) (*http.Request, error) {
	ctx, end := s.db.SettingsScope(r.Context()) // the token and the user: one generation read
	defer end()
	var (
		uid       int64
		sessionID string
		csrf      string
		mark      string // the credential's password mark ("" none)
		err       error
	)
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return r, auth.ErrUnauthenticated
		}
		uid, mark, err = s.auth.FromTokenMarked(ctx, strings.TrimSpace(token))
	} else if c, cerr := r.Cookie(SessionCookie); cerr == nil {
		sessionID = c.Value
		uid, csrf, mark, err = s.auth.FromSessionMarked(ctx, sessionID)
	} else {
		return r, auth.ErrUnauthenticated
	}
	if err != nil {
		return r, err
	}
	actor, err := access.LoadActor(ctx, s.dir, s.db, uid)
	if errors.Is(err, access.ErrNoUser) {
		return r, auth.ErrUnauthenticated
	}
	if err != nil {
		return r, fmt.Errorf("load user %d: %w", uid, err)
	}
	if !actor.Active() {
		return r, auth.ErrUnauthenticated
	}
	if mark != "" && mark != actor.PasswordMark {
		// The password changed in TYPO3 since the session or token was made:
		// TYPO3 ended her backend sessions, and Waymark's end alike.
		if sessionID != "" {
			if err := s.auth.Logout(ctx, sessionID); err != nil {
				return r, err
			}
		}
		return r, auth.ErrUnauthenticated
	}
	infoFrom(ctx).uid = uid
	if sessionID != "" && stateChanging(r.Method) {
		given := r.Header.Get(CSRFHeader)
		if given == "" || subtle.ConstantTimeCompare([]byte(given), []byte(csrf)) != 1 {
			return r, errCSRF.With("missing or wrong %s header", CSRFHeader)
		}
	}
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, &principal{actor: actor, sessionID: sessionID})), nil
}

func stateChanging(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}
