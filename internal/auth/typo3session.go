package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"waymark/internal/store"
)

// TYPO3Sessions says whether a TYPO3 backend session is still active: the
// TYPO3 extension asks TYPO3's own session backend (bridge.Client).
type TYPO3Sessions interface {
	SessionActive(ctx context.Context, user int64, session string) (active bool, reason string, err error)
}

// typo3SessionTTL is how long an answer of TYPO3 about a backend session is
// believed: the end of a TYPO3 session is noticed at the next request after
// it, as a change of rights is (access.WithActorMemo keeps a user as long).
const typo3SessionTTL = 2 * time.Second

// ErrTicketUsed refuses a ticket from TYPO3 that was redeemed before.
var ErrTicketUsed = errors.New("the sign-in ticket from TYPO3 was used already")

// SessionFromTYPO3 opens a session of user uid for the TYPO3 backend session
// typo3Session, whose ticket's nonce is redeemed here, once: a nonce seen
// before is ErrTicketUsed and opens nothing. The nonce is kept until
// expires, when the ticket is refused as expired anyway.
func (a *Authenticator) SessionFromTYPO3(ctx context.Context, uid int64, typo3Session, nonce string, expires time.Time) (Session, error) {
	if typo3Session == "" || nonce == "" {
		return Session{}, ErrUnauthenticated
	}
	var s Session
	err := a.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM typo3_tickets WHERE expires_at < ?", store.Micros(a.clk.Now().Add(-time.Minute))); err != nil {
			return err
		}
		res, err := tx.Exec(ctx, "INSERT INTO typo3_tickets (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING",
			nonce, store.Micros(expires))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return ErrTicketUsed
		}
		now := a.clk.Now()
		id := randomString()
		s = Session{ID: id, CSRF: csrfOf(id), UID: uid, Expires: now.Add(SessionTTL)}
		_, err = tx.Exec(ctx, "INSERT INTO sessions (id_hash, user_uid, csrf, created_at, expires_at, typo3_session) VALUES (?, ?, ?, ?, ?, ?)",
			sessionKey(s.ID), uid, sessionKey(s.CSRF), store.Micros(now), store.Micros(s.Expires), typo3Session)
		return err
	})
	if errors.Is(err, ErrTicketUsed) {
		return Session{}, err
	}
	if err != nil {
		return Session{}, fmt.Errorf("session from TYPO3: %w", err)
	}
	return s, nil
}

// typo3SessionActive refuses a session whose TYPO3 backend session has
// ended (and deletes it): ErrUnauthenticated, as an expired one. Without a
// way to ask TYPO3 (the bridge not configured) such a session is refused.
func (a *Authenticator) typo3SessionActive(ctx context.Context, sessionID string, uid int64, typo3Session string) error {
	if a.typo3 == nil {
		return ErrUnauthenticated
	}
	now := a.clk.Now()
	key := sessionKey(sessionID)
	a.mu.Lock()
	until, ok := a.typo3Seen[key]
	a.mu.Unlock()
	if ok && now.Before(until) {
		return nil
	}
	active, _, err := a.typo3.SessionActive(ctx, uid, typo3Session)
	if err != nil {
		return err
	}
	if !active {
		if err := a.Logout(ctx, sessionID); err != nil {
			return err
		}
		return ErrUnauthenticated
	}
	a.mu.Lock()
	if len(a.typo3Seen) > tokenCacheMax {
		clear(a.typo3Seen)
	}
	a.typo3Seen[key] = now.Add(typo3SessionTTL)
	a.mu.Unlock()
	return nil
}
