package main

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"

	"waymark/internal/httpapi"
)

// httpOptions is what the flags decide after parsing: the server's
// configuration and whether session cookies are Secure.
type httpOptions struct {
	serve   httpapi.ServeConfig
	secure  bool
	trusted []netip.Prefix // --trusted-proxies
}

// httpOptions validates the HTTP server's options of `waymark serve` and
// settles --secure-cookies: the flag or its variable when given, else on
// for an https public URL or when serving TLS.
func (f *flags) httpOptions() (httpOptions, error) {
	var o httpOptions
	if u := f.PublicURL; u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return o, fmt.Errorf("%w: --public-url %q: want http://HOST… or https://HOST…", errUsage, u)
		}
		o.secure = p.Scheme == "https"
	}
	if (f.TLSCert == "") != (f.TLSKey == "") {
		return o, fmt.Errorf("%w: --tls-cert and --tls-key go together", errUsage)
	}
	if f.TLSCert != "" {
		o.secure = true
		for _, file := range []string{f.TLSCert, f.TLSKey} {
			if _, err := os.Stat(file); err != nil {
				return o, fmt.Errorf("%w: TLS file: %w", errUsage, err)
			}
		}
	}
	if f.MaxClientConns < 1 {
		return o, fmt.Errorf("%w: --max-client-conns must be 1 or more", errUsage)
	}
	if f.given("secure-cookies") {
		o.secure = f.SecureCookies
	}
	o.serve = httpapi.ServeConfig{TLSCert: f.TLSCert, TLSKey: f.TLSKey, MaxClientConns: f.MaxClientConns}
	o.trusted = f.TrustedProxies
	return o, nil
}

// scheme is the scheme the server speaks.
func (o httpOptions) scheme() string {
	if o.serve.TLSCert != "" {
		return "https"
	}
	return "http"
}
