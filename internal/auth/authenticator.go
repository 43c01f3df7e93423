package auth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"waymark/internal/clock"
	"waymark/internal/fault"
	"waymark/internal/store"
)

// ErrUnauthenticated is returned for every credential that does not prove a
// user: unknown or wrong token, unknown user, wrong password, expired or
// unknown session, password login of a disabled user or a service account.
// It never says which part was wrong.
var ErrUnauthenticated = fault.New(fault.Unauthenticated, "unauthenticated", "authentication required")

// tokenCacheTTL bounds how long a verified token is remembered, so that a
// client does not pay a bcrypt comparison on every request. An entry also
// holds only for the settings generation it was verified at, which every
// change of api_tokens and be_users moves: a deleted token is refused at
// once. The user behind a token is checked on every request.
const tokenCacheTTL = 60 * time.Second

// tokenCacheMax bounds the cache; when full, expired entries are dropped and,
// if that is not enough, the whole cache.
const tokenCacheMax = 10000

// Authenticator checks API tokens, passwords and UI sessions against the store.
// It is safe for concurrent use.
type Authenticator struct {
	db  *store.DB
	clk clock.Clock

	mu    sync.Mutex // guards cache
	cache map[[32]byte]cachedToken

	dummyOnce sync.Once // guards dummyHash
	dummyHash string    // compared against when a username is unknown, to even out timing

	throttle *throttle     // failed logins per username and client
	checks   chan struct{} // one slot per password check running

	dir PasswordDirectory // nil: passwords are Waymark's own (be_users.password_hash)

	typo3     TYPO3Sessions        // nil: sessions from TYPO3 are refused
	typo3Seen map[string]time.Time // guarded by mu: session key → TYPO3 said active until
}

// PasswordDirectory checks the passwords of users kept outside Waymark's
// store — TYPO3's backend users, with the hash TYPO3 stores (package
// typo3/live). It is the login half of the user directory seam; the rights
// are access.Directory's.
type PasswordDirectory interface {
	// CheckLogin returns the uid of the user username and password prove,
	// whose row in Waymark's be_users in db (which sessions and tokens
	// name) exists when it returns. Every failure of the credentials — unknown,
	// deleted, disabled or expired user, wrong password — is
	// ErrUnauthenticated; other errors are failures of a database.
	CheckLogin(ctx context.Context, db *store.DB, username, password string) (int64, error)
}

// LogNoter is an error in a refused login's chain that tells the operator
// why (the kind of a password hash Waymark cannot verify); the login
// handler logs it at the default level, the user reads a wrong password.
type LogNoter interface {
	error
	LogNote() string
}

// Verified tokens are kept for one settings generation: every change of
// api_tokens must move it (checked by store.MissingGenerationTriggers).
var _ = store.GenerationTables("api_tokens")

type cachedToken struct {
	uid     int64
	mark    string // the token's password mark
	gen     int64  // settings generation read before the token was verified
	expires time.Time
}

// New returns an Authenticator reading db and deciding expiry and login
// windows by clk, with DefaultLimits.
func New(db *store.DB, clk clock.Clock) *Authenticator {
	return NewLimited(db, clk, Elsewhere{}, Limits{})
}

// Elsewhere is what an Authenticator asks beyond Waymark's own tables.
type Elsewhere struct {
	// Passwords checks password logins instead of Waymark's own password
	// hashes (nil: Waymark's own). Tokens and sessions stay Waymark's.
	Passwords PasswordDirectory
	// TYPO3Sessions, when set, makes sessions opened through TYPO3
	// (SessionFromTYPO3) hold only while their TYPO3 backend session does.
	TYPO3Sessions TYPO3Sessions
}

// NewLimited is New with the login limits l (zero fields: the defaults)
// and what the installation decides elsewhere (a CMS beside Waymark).
func NewLimited(db *store.DB, clk clock.Clock, e Elsewhere, l Limits) *Authenticator {
	t := newThrottle(l)
	return &Authenticator{db: db, clk: clk, dir: e.Passwords, typo3: e.TYPO3Sessions, cache: map[[32]byte]cachedToken{}, typo3Seen: map[string]time.Time{},
		throttle: t, checks: make(chan struct{}, t.limits.MaxChecks)}
}

// FromToken returns the uid of the user an API token belongs to. It returns
// ErrUnauthenticated for an unknown token; other errors are failures of the
// store. The caller must load the user and refuse a missing or disabled one.
func (a *Authenticator) FromToken(ctx context.Context, token string) (int64, error) {
	uid, _, err := a.FromTokenMarked(ctx, token)
	return uid, err
}

// FromTokenMarked is FromToken with the token's password mark ("" for
// none): the caller refuses a token whose user's password changed since
// (access.User.PasswordMark).
func (a *Authenticator) FromTokenMarked(ctx context.Context, token string) (int64, string, error) {
	if len(token) < 8 {
		return 0, "", ErrUnauthenticated
	}
	key := sha256.Sum256([]byte(token))
	now := a.clk.Now()
	// Read before the tokens: a change after this read moves it past the entry.
	gen, err := store.Generation(ctx, a.db)
	if err != nil {
		return 0, "", fmt.Errorf("find token: %w", err)
	}
	if e, ok := a.cached(key, gen, now); ok {
		return e.uid, e.mark, nil
	}
	rows, err := a.db.Query(ctx, "SELECT user_uid, hash, password_mark FROM api_tokens WHERE lookup = ?", TokenLookup(token))
	if err != nil {
		return 0, "", fmt.Errorf("find token: %w", err)
	}
	type candidate struct {
		uid        int64
		hash, mark string
	}
	var cands []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.uid, &c.hash, &c.mark); err != nil {
			rows.Close()
			return 0, "", fmt.Errorf("find token: %w", err)
		}
		cands = append(cands, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, "", fmt.Errorf("find token: %w", err)
	}
	for _, c := range cands {
		if CheckToken(c.hash, token) {
			a.remember(key, cachedToken{uid: c.uid, mark: c.mark, gen: gen, expires: now.Add(tokenCacheTTL)}, now)
			return c.uid, c.mark, nil
		}
	}
	return 0, "", ErrUnauthenticated
}

func (a *Authenticator) cached(key [32]byte, gen int64, now time.Time) (cachedToken, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.cache[key]
	if !ok {
		return cachedToken{}, false
	}
	if !now.Before(e.expires) || e.gen != gen {
		delete(a.cache, key)
		return cachedToken{}, false
	}
	return e, true
}

func (a *Authenticator) remember(key [32]byte, entry cachedToken, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cache) >= tokenCacheMax {
		for k, e := range a.cache {
			if !now.Before(e.expires) {
				delete(a.cache, k)
			}
		}
		if len(a.cache) >= tokenCacheMax {
			clear(a.cache)
		}
	}
	a.cache[key] = entry
}

// ForgetTokens empties the token cache, so that a deleted token stops working
// at once instead of within a minute.
func (a *Authenticator) ForgetTokens() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.cache)
}
