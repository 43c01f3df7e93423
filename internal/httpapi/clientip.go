package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseTrustedProxies parses --trusted-proxies: networks in CIDR notation
// separated by commas ("10.0.0.0/8,fd00::/8"); a bare address is a network of
// that one address. The empty string is none. An entry that is neither names
// itself in the error.
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			if p.Addr().Is4In6() {
				p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR such as 10.0.0.0/8 nor an address", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// clientIP is the address of the client a request came from: the address
// login throttling and the access log go by. It is the peer's address unless the peer is a trusted proxy: then
// the right-most address of X-Forwarded-For that is not itself a trusted
// proxy names the client, or, without that header, the right-most such
// address of Forwarded's for= (RFC 7239). Every address left of the first
// untrusted one was written by the client and could be anything, so it is
// never read. When every forwarded address is trusted, the left-most one is
// the client; an entry that is no address (RFC 7239's "unknown" or an
// obfuscated name) ends the walk at the last trusted hop before it.
//
// A proxy must therefore append to (or overwrite) X-Forwarded-For, or speak
// Forwarded and drop a client's X-Forwarded-For: the header a trusted proxy
// passes through untouched is the client's to forge.
func clientIP(r *http.Request, trusted []netip.Prefix) string {
	peer := peerAddr(r.RemoteAddr)
	if len(trusted) == 0 || !peer.IsValid() || !isTrusted(peer, trusted) {
		return addrString(peer, r.RemoteAddr)
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		if strings.TrimSpace(v) != "" { // an empty header is none
			hops = append(hops, strings.Split(v, ",")...)
		}
	}
	if len(hops) == 0 {
		for _, v := range r.Header.Values("Forwarded") {
			hops = append(hops, forwardedFor(v)...)
		}
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a := hopAddr(hops[i])
		if !a.IsValid() {
			break
		}
		client = a
		if !isTrusted(a, trusted) {
			break
		}
	}
	return client.String()
}

// forwardedFor returns the for= values of a Forwarded header's elements, in
// order, unquoted: `for=192.0.2.60;proto=http, for="[2001:db8::1]:4711"`
// gives "192.0.2.60" and "[2001:db8::1]:4711". An element without for= gives
// "" (no address).
func forwardedFor(header string) []string {
	var out []string
	for _, elem := range splitQuoted(header, ',') {
		v := ""
		for _, pair := range splitQuoted(elem, ';') {
			k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
				v = strings.Trim(strings.TrimSpace(val), `"`)
			}
		}
		out = append(out, v)
	}
	return out
}

// splitQuoted splits s at sep outside double quotes.
func splitQuoted(s string, sep byte) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case s[i] == sep && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// hopAddr parses one forwarded address: "192.0.2.1", "2001:db8::1",
// "[2001:db8::1]", or either with a port. Anything else is the zero Addr.
func hopAddr(s string) netip.Addr {
	s = strings.TrimSpace(s)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil && a.Zone() == "" {
		return a.Unmap()
	}
	return netip.Addr{}
}

// peerAddr is the address of a request's RemoteAddr ("host:port").
func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	if host, _, err := net.SplitHostPort(remote); err == nil {
		remote = host
	}
	a, _ := netip.ParseAddr(remote)
	return a.Unmap()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// addrString is a's text, or the raw RemoteAddr's host when it is no address
// (a test's "pipe", say).
func addrString(a netip.Addr, remote string) string {
	if a.IsValid() {
		return a.String()
	}
	if host, _, err := net.SplitHostPort(remote); err == nil {
		return host
	}
	return remote
}
