package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"waymark/internal/store"
)

// SessionTTL is the lifetime of a UI session from login; it is not extended by use.
const SessionTTL = 12 * time.Hour

// Session is a UI login. ID goes into the session cookie; CSRF must accompany
// every state-changing request of the session. The store keeps only the
// sha256 of each.
type Session struct {
	ID      string
	CSRF    string
	UID     int64
	Expires time.Time
}

// Login is LoginFrom without a client address: only the username is throttled.
func (a *Authenticator) Login(ctx context.Context, username, password string) (Session, error) {
	return a.LoginFrom(ctx, "", username, password)
}

// LoginFrom checks a username and password tried from client (an address;
// "" when unknown) and creates a session. A wrong password, an unknown
// username, a disabled user and a service account all yield
// ErrUnauthenticated and count as a failure of the username and the client;
// once either has failed too often within the window, LoginFrom returns a
// *ThrottledError without checking the password, whatever it is. At most
// Limits.MaxChecks password checks run at once; the others wait for a turn
// or the end of ctx. Other errors are failures of the store.
func (a *Authenticator) LoginFrom(ctx context.Context, client, username, password string) (Session, error) {
	if len(password) > MaxPasswordBytes && a.dir == nil {
		// bcrypt reads only the first 72 bytes: a longer password would log in
		// on its prefix. Refused before the throttle — it proves nothing about
		// the user, and counts neither as a failure nor as a success.
		return Session{}, ErrPasswordTooLong
	}
	if wait := a.throttle.attempt(a.clk.Now(), username, client); wait > 0 {
		return Session{}, &ThrottledError{RetryAfter: wait}
	}
	s, err := a.login(ctx, username, password)
	if !errors.Is(err, ErrUnauthenticated) { // a success, or a fault that proved nothing wrong
		a.throttle.succeeded(a.clk.Now(), username, client)
	}
	return s, err
}

// checkPassword is CheckPassword within the bound of concurrent checks.
func (a *Authenticator) checkPassword(ctx context.Context, hash, password string) (bool, error) {
	select {
	case a.checks <- struct{}{}:
	case <-ctx.Done():
		return false, fmt.Errorf("login: waiting for a password check: %w", ctx.Err())
	}
	defer func() { <-a.checks }()
	return CheckPassword(hash, password), nil
}

func (a *Authenticator) login(ctx context.Context, username, password string) (Session, error) {
	if a.dir != nil {
		uid, err := a.directoryLogin(ctx, username, password)
		if err != nil {
			return Session{}, err
		}
		return a.newSession(ctx, uid)
	}
	var (
		uid             int64
		hash            string
		disabled, robot bool
	)
	err := a.db.QueryRow(ctx, "SELECT uid, password_hash, disabled, service_account FROM be_users WHERE username = ?", username).
		Scan(&uid, &hash, &disabled, &robot)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := a.checkPassword(ctx, a.dummy(), password); err != nil { // the same work as for a known user
			return Session{}, err
		}
		return Session{}, ErrUnauthenticated
	}
	if err != nil {
		return Session{}, fmt.Errorf("login: %w", err)
	}
	if hash == "" {
		// A user without a password (a service account, a user who only has
		// tokens) costs the same bcrypt work as every other failure, so the
		// answer's timing does not tell such names apart.
		hash, robot = a.dummy(), true // the dummy never matches; robot: refused all the same
	}
	ok, err := a.checkPassword(ctx, hash, password)
	if err != nil {
		return Session{}, err
	}
	if !ok || disabled || robot {
		return Session{}, ErrUnauthenticated
	}
	return a.newSession(ctx, uid)
}

// directoryLogin is the password check of a PasswordDirectory, within the
// bound of concurrent checks (TYPO3's Argon2 costs 64 MiB per check).
func (a *Authenticator) directoryLogin(ctx context.Context, username, password string) (int64, error) {
	select {
	case a.checks <- struct{}{}:
	case <-ctx.Done():
		return 0, fmt.Errorf("login: waiting for a password check: %w", ctx.Err())
	}
	defer func() { <-a.checks }()
	return a.dir.CheckLogin(ctx, a.db, username, password)
}

// newSession creates a session of user uid.
func (a *Authenticator) newSession(ctx context.Context, uid int64) (Session, error) {
	return a.sessionFor(ctx, uid, "")
}

// sessionFor creates a session of user uid that names the TYPO3 backend
// session it came from ("" for none).
func (a *Authenticator) sessionFor(ctx context.Context, uid int64, typo3Session string) (Session, error) {
	now := a.clk.Now()
	id := randomString()
	s := Session{ID: id, CSRF: csrfOf(id), UID: uid, Expires: now.Add(SessionTTL)}
	if _, err := a.db.Exec(ctx, "INSERT INTO sessions (id_hash, user_uid, csrf, created_at, expires_at, typo3_session) VALUES (?, ?, ?, ?, ?, ?)",
		sessionKey(s.ID), uid, sessionKey(s.CSRF), store.Micros(now), store.Micros(s.Expires), typo3Session); err != nil {
		return Session{}, fmt.Errorf("create session: %w", err)
	}
	return s, nil
}

// FromSession returns the uid and CSRF token of an unexpired session. It
// returns ErrUnauthenticated for an unknown or expired session; other errors
// are failures of the store. The caller must load the user and refuse a
// missing or disabled one.
func (a *Authenticator) FromSession(ctx context.Context, sessionID string) (uid int64, csrf string, err error) {
	uid, csrf, _, err = a.FromSessionMarked(ctx, sessionID)
	return uid, csrf, err
}

// FromSessionMarked is FromSession with the session's password mark (""
// for none): the caller ends a session whose user's password changed since
// (access.User.PasswordMark).
func (a *Authenticator) FromSessionMarked(ctx context.Context, sessionID string) (uid int64, csrf, mark string, err error) {
	if sessionID == "" {
		return 0, "", "", ErrUnauthenticated
	}
	var (
		expires      int64
		csrfHash     string
		typo3Session string
	)
	err = a.db.QueryRow(ctx, "SELECT user_uid, csrf, expires_at, typo3_session, password_mark FROM sessions WHERE id_hash = ?", sessionKey(sessionID)).
		Scan(&uid, &csrfHash, &expires, &typo3Session, &mark)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", "", ErrUnauthenticated
	}
	if err != nil {
		return 0, "", "", fmt.Errorf("find session: %w", err)
	}
	if !a.clk.Now().Before(store.Time(expires)) {
		return 0, "", "", ErrUnauthenticated
	}
	csrf = csrfOf(sessionID)
	if subtle.ConstantTimeCompare([]byte(sessionKey(csrf)), []byte(csrfHash)) != 1 {
		return 0, "", "", ErrUnauthenticated // a session stored before CSRF tokens were hashed: log in again
	}
	if typo3Session != "" {
		if err := a.typo3SessionActive(ctx, sessionID, uid, typo3Session); err != nil {
			return 0, "", "", err
		}
	}
	return uid, csrf, mark, nil
}

// MarkSession sets the password mark of a session (access.User.PasswordMark
// when it was made): a password changed since ends it.
func (a *Authenticator) MarkSession(ctx context.Context, sessionID, mark string) error {
	if _, err := a.db.Exec(ctx, "UPDATE sessions SET password_mark = ? WHERE id_hash = ?", mark, sessionKey(sessionID)); err != nil {
		return fmt.Errorf("mark session: %w", err)
	}
	return nil
}

// Logout deletes a session. Deleting an unknown session is not an error.
func (a *Authenticator) Logout(ctx context.Context, sessionID string) error {
	if _, err := a.db.Exec(ctx, "DELETE FROM sessions WHERE id_hash = ?", sessionKey(sessionID)); err != nil {
		return fmt.Errorf("logout: %w", err)
	}
	return nil
}

// PurgeSessions deletes expired sessions and reports how many.
func (a *Authenticator) PurgeSessions(ctx context.Context) (int64, error) {
	res, err := a.db.Exec(ctx, "DELETE FROM sessions WHERE expires_at <= ?", store.Micros(a.clk.Now()))
	if err != nil {
		return 0, fmt.Errorf("purge sessions: %w", err)
	}
	return res.RowsAffected()
}

func (a *Authenticator) dummy() string {
	a.dummyOnce.Do(func() {
		cost := a.throttle.limits.HashCost
		if CheckCost(cost) != nil {
			cost = DefaultCost
		}
		a.dummyHash, _ = HashPassword("waymark-no-such-user", cost)
	})
	return a.dummyHash
}

// csrfOf is the CSRF token of a session: derived from the session id (which
// only the session's browser and this server know), so that the store keeps
// nothing but its hash and the token can still be handed out again.
func csrfOf(sessionID string) string {
	sum := sha256.Sum256([]byte("waymark csrf\x00" + sessionID))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// sessionKey is what the store keeps of a session id (and of its CSRF token).
func sessionKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// randomString returns 32 random bytes, URL-safe base64.
func randomString() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}
