package httpapi

import (
	"net/http/httptest"
	"testing"
)

// The client of a request is the right-most forwarded address that is not a
// trusted proxy, and only when the peer is one.
func TestClientIPTakesTheRightMostUntrustedForwardedAddress(t *testing.T) {
	trusted, err := ParseTrustedProxies("127.0.0.1, 10.0.0.0/8 ,fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, peer, xff, fwd, want string
	}{
		{"no proxy headers", "127.0.0.1:5000", "", "", "127.0.0.1"},
		{"untrusted peer", "192.0.2.9:5000", "198.51.100.7", "", "192.0.2.9"},
		{"one hop", "127.0.0.1:5000", "198.51.100.7", "", "198.51.100.7"},
		{"client-forged entries left of the proxy's", "127.0.0.1:5000", "6.6.6.6, 198.51.100.7", "", "198.51.100.7"},
		{"two trusted hops", "127.0.0.1:5000", "198.51.100.7, 10.1.2.3", "", "198.51.100.7"},
		{"every hop trusted", "127.0.0.1:5000", "10.0.0.2, 10.1.2.3", "", "10.0.0.2"},
		{"with a port", "127.0.0.1:5000", "198.51.100.7:4711", "", "198.51.100.7"},
		{"IPv6 in brackets", "[fd00::1]:5000", "[2001:db8::1]", "", "2001:db8::1"},
		{"IPv4-mapped peer", "[::ffff:127.0.0.1]:5000", "198.51.100.7", "", "198.51.100.7"},
		{"garbage ends the walk at the proxy", "127.0.0.1:5000", "evil", "", "127.0.0.1"},
		{"X-Forwarded-For wins over Forwarded", "127.0.0.1:5000", "198.51.100.7", "for=6.6.6.6", "198.51.100.7"},
		{"Forwarded", "127.0.0.1:5000", "", `for=6.6.6.6, for="198.51.100.7:80";proto=https`, "198.51.100.7"},
		{"empty X-Forwarded-For is none", "127.0.0.1:5000", " ", "for=198.51.100.7", "198.51.100.7"},
		{"Forwarded IPv6", "127.0.0.1:5000", "", `for="[2001:db8::1]:4711"`, "2001:db8::1"},
		{"Forwarded unknown", "127.0.0.1:5000", "", `for=unknown`, "127.0.0.1"},
		{"Forwarded without for", "127.0.0.1:5000", "", `proto=https`, "127.0.0.1"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if c.fwd != "" {
			r.Header.Set("Forwarded", c.fwd)
		}
		if got := clientIP(r, trusted); got != c.want {
			t.Errorf("%s: clientIP(peer %s, X-Forwarded-For %q, Forwarded %q) = %s, want %s", c.name, c.peer, c.xff, c.fwd, got, c.want)
		}
	}
}

func TestParseTrustedProxiesRefusesWhatIsNoNetwork(t *testing.T) {
	for _, bad := range []string{"10.0.0.0/33", "ten", "10.0.0.0/8,nope"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q) = nil error, want one", bad)
		}
	}
	got, err := ParseTrustedProxies(" ,192.0.2.1,::ffff:10.0.0.0/104")
	if err != nil || len(got) != 2 || got[0].String() != "192.0.2.1/32" || got[1].String() != "10.0.0.0/8" {
		t.Errorf("ParseTrustedProxies = %v, %v; want 192.0.2.1/32 and 10.0.0.0/8", got, err)
	}
}
