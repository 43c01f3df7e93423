package httpapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"waymark/internal/access"
	"waymark/internal/auth"
)

type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

type loginAnswer struct {
	CSRFToken string `json:"csrfToken"`
	User      Me     `json:"user"`
}

// handleLogin answers POST /api/login: a password login of a person (not a
// service account) that sets the session cookie and returns the CSRF token
// the UI sends with state-changing requests. Requiring a JSON body keeps
// cross-site forms from logging a browser in. A username or client address
// that failed too often answers 429 with Retry-After.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error {
	var req loginRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	csrf, err := s.PasswordLogin(r.Context(), w, r, req.Username, req.Password)
	if err != nil {
		return err
	}
	return s.answerLogin(w, r, csrf)
}

// answerLogin answers a login that opened a session: its CSRF token and the user.
func (s *Server) answerLogin(w http.ResponseWriter, r *http.Request, csrf string) error {
	actor, err := access.LoadActor(r.Context(), s.dir, s.db, infoFrom(r.Context()).uid)
	if err != nil {
		return fmt.Errorf("load user after login: %w", err)
	}
	return WriteJSON(w, http.StatusOK, loginAnswer{CSRFToken: csrf, User: MeOf(actor)})
}

// PasswordLogin is the password login of POST /api/login, also for the web
// UI's form: the same checks, throttling and refusals, then the session
// cookie. It returns the session's CSRF token. A refusal is a fault (package fault): 400
// without username or password, 401 for wrong credentials, 429 (with
// Retry-After) for a username or client address that failed too often.
func (s *Server) PasswordLogin(ctx context.Context, w http.ResponseWriter, r *http.Request, username, password string) (string, error) {
	if s.noPassword {
		return "", errPasswordLoginOff
	}
	if username == "" || password == "" {
		return "", errBadRequest.With("username and password are required")
	}
	sess, err := s.auth.LoginFrom(ctx, clientAddr(r), username, password)
	var throttled *auth.ThrottledError
	if errors.As(err, &throttled) {
		secs := int64(math.Ceil(throttled.RetryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
		return "", errTooManyAttempts.Wrap(err)
	}
	if errors.Is(err, auth.ErrUnauthenticated) {
		if n, ok := errors.AsType[auth.LogNoter](err); ok {
			s.logger.WarnContext(ctx, "login refused", "username", username, "reason", n.LogNote())
		}
		return "", auth.ErrUnauthenticated.With("wrong username or password").Wrap(err)
	}
	if err != nil {
		return "", err
	}
	infoFrom(ctx).uid = sess.UID
	// Beside TYPO3 the session carries the mark of the password it was
	// opened with: a password changed in TYPO3 ends it.
	if u, err := s.dir.LoadUser(ctx, s.db, sess.UID); err != nil {
		return "", fmt.Errorf("load user after login: %w", err)
	} else if u.PasswordMark != "" {
		if err := s.auth.MarkSession(ctx, sess.ID, u.PasswordMark); err != nil {
			return "", err
		}
	}
	s.SetSessionCookie(w, r, sess)
	return sess.CSRF, nil
}

// clientAddr is the address a request came from: the client's (clientIP)
// when it came through the server's middleware, else the peer's.
func clientAddr(r *http.Request) string {
	if info, ok := r.Context().Value(infoKey{}).(*requestInfo); ok && info.client != "" {
		return info.client
	}
	return addrString(peerAddr(r.RemoteAddr), r.RemoteAddr)
}
