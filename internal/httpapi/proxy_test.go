package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"waymark/internal/httpapi"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// behindProxy serves setup's server over real HTTP with trusted as its
// trusted proxies; every request reaches it from 127.0.0.1.
func behindProxy(t *testing.T, db *store.DB, trusted string) (bundle, func(user, password string, header http.Header) int) {
	t.Helper()
	nets, err := httpapi.ParseTrustedProxies(trusted)
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t, db, func(c *httpapi.Config) { c.TrustedProxies = nets })
	srv := httptest.NewServer(b.h)
	t.Cleanup(srv.Close)
	login := func(user, password string, header http.Header) int {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/api/login", strings.NewReader(`{"username":"`+user+`","password":"`+password+`"}`))
		req.Header = header.Clone()
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("POST /api/login: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	return b, login
}

// guess is the username of an attacker's i-th wrong login: erika five
// times (her limit), then a new name each time, so that every one of them
// is checked and counts against the client.
func guess(i int) string {
	if i < 5 {
		return "erika"
	}
	return fmt.Sprintf("guess%d", i)
}

func xff(addr string) http.Header { return http.Header{"X-Forwarded-For": {addr}} }

// Behind a trusted reverse proxy every login reaches the server from the
// proxy's address; the client the proxy names in X-Forwarded-For is the one
// throttled. 20 wrong logins from client A do not make a correct login from
// client B answer 429 — neither of another user nor of the user A attacked
// — while A stays refused.
func TestBadLoginsOfOneClientBehindATrustedProxyDoNotLockOutAnother(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, login := behindProxy(t, db, "127.0.0.1/32")
		const a, bb = "198.51.100.7", "203.0.113.9"
		for i := range 20 {
			// Five at erika, then guesses at other names; the proxy appends
			// its peer to what the client sent.
			if code := login(guess(i), "wrong", xff("10.9.9.9, "+a)); code != http.StatusUnauthorized {
				t.Fatalf("wrong login %d from A = %d, want 401", i+1, code)
			}
		}
		if code := login("admin", "admin-pw", xff(bb)); code != http.StatusOK {
			t.Errorf("correct login of another user from B after 20 bad logins from A = %d, want 200", code)
		}
		if code := login("erika", "erika-pw", xff(bb)); code != http.StatusOK {
			t.Errorf("correct login of the attacked user from B = %d, want 200", code)
		}
		if code := login("admin", "admin-pw", xff(a)); code != http.StatusTooManyRequests {
			t.Errorf("correct login from A after its 20 bad logins = %d, want 429", code)
		}
		if logs := b.logs.String(); !strings.Contains(logs, "client="+a) || !strings.Contains(logs, "client="+bb) {
			t.Errorf("access log does not name the clients %s and %s:\n%s", a, bb, logs)
		}
	})
}

// From a peer that is not a trusted proxy X-Forwarded-For is ignored: a
// client that names itself a new address on every try is still throttled
// as the peer it is.
func TestSpoofedForwardedForFromAnUntrustedPeerDoesNotEscapeTheThrottle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, login := behindProxy(t, db, "10.0.0.0/8")
		for i := range 20 {
			spoof := netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)}).String()
			if code := login(guess(i), "wrong", xff(spoof)); code != http.StatusUnauthorized {
				t.Fatalf("wrong login %d = %d, want 401", i+1, code)
			}
		}
		if code := login("admin", "admin-pw", xff("203.0.113.9")); code != http.StatusTooManyRequests {
			t.Errorf("correct login from the same untrusted peer claiming a fresh address = %d, want 429", code)
		}
		if logs := b.logs.String(); strings.Contains(logs, "client=198.51.100.") || !strings.Contains(logs, "client=127.0.0.1") {
			t.Errorf("access log names a spoofed client or not the peer:\n%s", logs)
		}
	})
}

// A proxy that speaks RFC 7239 names the client in Forwarded's for=, quoted
// with a port or an IPv6 address in brackets.
func TestForwardedHeaderOfATrustedProxyNamesTheClient(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, login := behindProxy(t, db, "127.0.0.0/8,::1")
		fwd := func(v string) http.Header { return http.Header{"Forwarded": {v}} }
		for i := range 20 {
			if code := login(guess(i), "wrong", fwd(`for=192.0.2.1, for="198.51.100.7:4711";proto=https`)); code != http.StatusUnauthorized {
				t.Fatalf("wrong login %d from A = %d, want 401", i+1, code)
			}
		}
		if code := login("admin", "admin-pw", fwd(`for="[2001:db8::1]:4711";proto=https;by=_proxy`)); code != http.StatusOK {
			t.Errorf("correct login from B (Forwarded) after 20 bad logins from A = %d, want 200", code)
		}
		if code := login("admin", "admin-pw", fwd(`For="198.51.100.7"`)); code != http.StatusTooManyRequests {
			t.Errorf("correct login from A (Forwarded) = %d, want 429", code)
		}
		if logs := b.logs.String(); !strings.Contains(logs, "client=2001:db8::1") {
			t.Errorf("access log does not name the IPv6 client:\n%s", logs)
		}
	})
}
