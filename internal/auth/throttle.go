package auth

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Limits bound password logins. Zero fields take the defaults of
// DefaultLimits.
//
// A username that failed PerUsername times within the window is refused
// to every client that failed it in that window — but not to a client
// that has not: so a flood of wrong passwords from one address, or from a
// few, cannot lock the user out of their own address, while each address
// still gets at most PerUsername tries at a username per window (and, once
// the username is over its limit, one). A client address that failed
// PerClient times is refused whatever the username. A refused try checks
// no password, whatever it is.
type Limits struct {
	PerUsername int           // failed logins of one username per Window before clients that failed it are refused (default 5)
	PerClient   int           // failed logins from one client address per Window (default 20)
	Window      time.Duration // default one minute
	// MaxChecks bounds the bcrypt comparisons running at once, so that a
	// flood of logins cannot starve other requests of CPU (default: half the
	// CPUs, at least one). Logins beyond it wait their turn.
	MaxChecks int
	// HashCost is the bcrypt work factor of the hash a login of an unknown
	// username is checked against, so that it takes as long as a wrong
	// password (0: DefaultCost). The wiring passes the cost it hashes new
	// passwords at (app.Config.HashCost); a cost CheckCost refuses is
	// taken as DefaultCost.
	HashCost int
}

// DefaultLimits are the limits New uses.
func DefaultLimits() Limits {
	return Limits{PerUsername: 5, PerClient: 20, Window: time.Minute, MaxChecks: max(1, runtime.GOMAXPROCS(0)/2)}
}

// ThrottledError is returned by Login for a username or client address that
// failed too often within the window; no password was checked. It wraps
// ErrUnauthenticated, so callers that only know that error still refuse.
type ThrottledError struct {
	RetryAfter time.Duration // until the window of the blocking key ends
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many failed logins; retry in %s", e.RetryAfter.Round(time.Second))
}

// Unwrap returns ErrUnauthenticated.
func (e *ThrottledError) Unwrap() error { return ErrUnauthenticated }

// throttleMax bounds the remembered keys; beyond it expired windows are dropped.
const throttleMax = 100_000

// throttle counts failed logins per key in fixed windows of the injected clock.
type throttle struct {
	limits Limits

	mu   sync.Mutex         // guards wins
	wins map[string]*window // by key: userKey, clientKey or pairKey
}

type window struct {
	start    time.Time
	failures int
}

func newThrottle(l Limits) *throttle {
	d := DefaultLimits()
	if l.PerUsername <= 0 {
		l.PerUsername = d.PerUsername
	}
	if l.PerClient <= 0 {
		l.PerClient = d.PerClient
	}
	if l.Window <= 0 {
		l.Window = d.Window
	}
	if l.MaxChecks <= 0 {
		l.MaxChecks = d.MaxChecks
	}
	return &throttle{limits: l, wins: map[string]*window{}}
}

func userKey(username string) string { return "u:" + strings.ToLower(username) }
func clientKey(client string) string { return "c:" + client }

// pairKey counts the failures of username from client; "" (an unknown
// client) is one client like any other.
func pairKey(username, client string) string {
	return "p:" + client + "\x00" + strings.ToLower(username)
}

// attempt admits a login try of username from client (Limits says when
// it is refused): when refused it returns how long to wait and counts
// nothing; otherwise it counts the try as a failure of the username, the
// client and the pair up front (so that concurrent tries cannot pass a
// limit together) and returns 0. A try that succeeds is taken back with
// succeeded.
func (t *throttle) attempt(now time.Time, username, client string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := []string{userKey(username), pairKey(username, client)}
	var wait time.Duration
	if user := t.waitLocked(now, keys[0], t.limits.PerUsername); user > 0 {
		// Over its limit, the username is refused only to a client that failed it.
		if pair := t.waitLocked(now, keys[1], 1); pair > 0 {
			wait = min(user, pair)
		}
	}
	if client != "" {
		keys = append(keys, clientKey(client))
		wait = max(wait, t.waitLocked(now, keys[2], t.limits.PerClient))
	}
	if wait > 0 {
		return wait
	}
	if len(t.wins) >= throttleMax {
		for k, w := range t.wins {
			if !now.Before(w.start.Add(t.limits.Window)) {
				delete(t.wins, k)
			}
		}
	}
	for _, k := range keys {
		t.countLocked(now, k, 1)
	}
	return 0
}

// succeeded takes back the try attempt counted.
func (t *throttle) succeeded(now time.Time, username, client string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.countLocked(now, userKey(username), -1)
	t.countLocked(now, pairKey(username, client), -1)
	if client != "" {
		t.countLocked(now, clientKey(client), -1)
	}
}

func (t *throttle) waitLocked(now time.Time, key string, limit int) time.Duration {
	w, ok := t.wins[key]
	if !ok {
		return 0
	}
	end := w.start.Add(t.limits.Window)
	if !now.Before(end) {
		delete(t.wins, key)
		return 0
	}
	if w.failures < limit {
		return 0
	}
	return end.Sub(now)
}

// countLocked adds n to the failures of key's current window, opening a new
// window for a positive n when there is none.
func (t *throttle) countLocked(now time.Time, key string, n int) {
	w, ok := t.wins[key]
	if !ok || !now.Before(w.start.Add(t.limits.Window)) {
		if n < 0 || (!ok && len(t.wins) >= throttleMax) {
			return // nothing to take back; or full of live windows: the other key still counts
		}
		w = &window{start: now}
		t.wins[key] = w
	}
	if w.failures += n; w.failures <= 0 {
		delete(t.wins, key)
	}
}
