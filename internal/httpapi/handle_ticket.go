package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"waymark/internal/access"
	"waymark/internal/auth"
	"waymark/internal/fault"
	"waymark/internal/store"
	"waymark/internal/typo3/bridge"
)

// TYPO3Bridge is what the server needs of the TYPO3 extension
// (bridge.Client): the shared secret that verifies its tickets, and
// whether a TYPO3 backend session is still active.
type TYPO3Bridge interface {
	Secret() string
	SessionActive(ctx context.Context, user int64, session string) (active bool, reason string, err error)
}

var (
	errBadTicket = fault.New(fault.Unauthenticated, "bad_ticket",
		"the sign-in from TYPO3 is not valid (expired, used already, or not signed by TYPO3); open Waymark from the TYPO3 backend again")
	errNoBridge = fault.New(fault.NotFound, "typo3_bridge_off",
		"signing in through TYPO3 is not configured (--typo3-bridge, --typo3-bridge-secret)")
	errBridgeUnavailable = fault.New(fault.Unavailable, "typo3_unavailable",
		"TYPO3 does not answer; nothing was changed, try again in a moment")
	errPasswordLoginOff = fault.New(fault.Forbidden, "password_login_off",
		"Waymark is opened from the TYPO3 backend (module \"Waymark\"); password login is off")
)

// TicketLogin opens a session for the backend user a ticket of the TYPO3
// extension names (docs/typo3-bridge.md): signed with the shared secret,
// at most 60 s old, used once, its TYPO3 backend session still active and
// the user active in TYPO3 now. The session holds while that TYPO3 session
// does. It returns the session's CSRF token and the ticket (its page and
// language). Every refusal opens nothing.
func (s *Server) TicketLogin(ctx context.Context, w http.ResponseWriter, r *http.Request, ticket string) (string, bridge.Ticket, error) {
	if s.bridge == nil {
		return "", bridge.Ticket{}, errNoBridge
	}
	t, err := bridge.ParseTicket(s.bridge.Secret(), ticket, s.clock.Now())
	if err != nil {
		return "", bridge.Ticket{}, errBadTicket.Wrap(err)
	}
	active, reason, err := s.bridge.SessionActive(ctx, t.User, t.Session)
	if err != nil {
		return "", bridge.Ticket{}, errBridgeUnavailable.Wrap(err)
	}
	if !active {
		return "", bridge.Ticket{}, errBadTicket.Wrap(fmt.Errorf("the TYPO3 session has ended: %s", reason))
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return access.KeepUserTx(ctx, tx, t.User, t.Username) }); err != nil {
		return "", bridge.Ticket{}, err
	}
	actor, err := access.LoadActor(ctx, s.dir, s.db, t.User)
	if errors.Is(err, access.ErrNoUser) || (err == nil && !actor.Active()) {
		return "", bridge.Ticket{}, errBadTicket.Wrap(fmt.Errorf("TYPO3 user %d is not active", t.User))
	}
	if err != nil {
		return "", bridge.Ticket{}, err
	}
	sess, err := s.auth.SessionFromTYPO3(ctx, t.User, t.Session, t.Nonce, t.ExpiresAt())
	if errors.Is(err, auth.ErrTicketUsed) {
		return "", bridge.Ticket{}, errBadTicket.Wrap(err)
	}
	if err != nil {
		return "", bridge.Ticket{}, err
	}
	infoFrom(ctx).uid = sess.UID
	s.SetSessionCookie(w, r, sess)
	return sess.CSRF, t, nil
}

type ticketRequest struct {
	Ticket string `json:"ticket"`
}

// handleTicketLogin is POST /api/login/typo3: TicketLogin for API clients.
func (s *Server) handleTicketLogin(w http.ResponseWriter, r *http.Request) error {
	var req ticketRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Ticket == "" {
		return errBadRequest.With("ticket is required")
	}
	csrf, _, err := s.TicketLogin(r.Context(), w, r, req.Ticket)
	if err != nil {
		return err
	}
	return s.answerLogin(w, r, csrf)
}
