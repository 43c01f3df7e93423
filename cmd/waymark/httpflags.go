package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"strconv"

	"waymark/internal/httpapi"
)

// httpFlags are the HTTP server's options of `waymark serve` (issue 12 items
// 7 and 10), each a flag with its environment key.
type httpFlags struct {
	fs             *flag.FlagSet
	publicURL      *string
	secureCookies  *bool
	tlsCert        *string
	tlsKey         *string
	maxClientConns *int
}

func defineHTTPFlags(fs *flag.FlagSet) *httpFlags {
	conns := httpapi.DefaultMaxClientConns
	if v, err := strconv.Atoi(os.Getenv("WAYMARK_MAX_CLIENT_CONNS")); err == nil {
		conns = v
	}
	return &httpFlags{
		fs:        fs,
		publicURL: fs.String("public-url", os.Getenv("WAYMARK_PUBLIC_URL"), "URL users reach the server at (https://… turns --secure-cookies on)"),
		secureCookies: fs.Bool("secure-cookies", false,
			"mark the session cookie Secure (default: WAYMARK_SECURE_COOKIES, else on when --public-url is https://)"),
		tlsCert:        fs.String("tls-cert", os.Getenv("WAYMARK_TLS_CERT"), "PEM certificate file: serve HTTPS (with --tls-key)"),
		tlsKey:         fs.String("tls-key", os.Getenv("WAYMARK_TLS_KEY"), "PEM key file of --tls-cert"),
		maxClientConns: fs.Int("max-client-conns", conns, "open connections per client address (WAYMARK_MAX_CLIENT_CONNS); behind a proxy, raise it"),
	}
}

// httpOptions is what the flags decide after parsing: the server's
// configuration and whether session cookies are Secure.
type httpOptions struct {
	serve  httpapi.ServeConfig
	secure bool
}

// resolve validates the flags and settles --secure-cookies: the flag when
// given, else WAYMARK_SECURE_COOKIES when set, else on for an https public
// URL or when serving TLS.
func (f *httpFlags) resolve() (httpOptions, error) {
	var o httpOptions
	if u := *f.publicURL; u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return o, fmt.Errorf("%w: --public-url %q: want http://HOST… or https://HOST…", errUsage, u)
		}
		o.secure = p.Scheme == "https"
	}
	if (*f.tlsCert == "") != (*f.tlsKey == "") {
		return o, fmt.Errorf("%w: --tls-cert and --tls-key go together", errUsage)
	}
	if *f.tlsCert != "" {
		o.secure = true
		for _, file := range []string{*f.tlsCert, *f.tlsKey} {
			if _, err := os.Stat(file); err != nil {
				return o, fmt.Errorf("%w: TLS file: %w", errUsage, err)
			}
		}
	}
	if *f.maxClientConns < 1 {
		return o, fmt.Errorf("%w: --max-client-conns must be 1 or more", errUsage)
	}
	if env := os.Getenv("WAYMARK_SECURE_COOKIES"); env != "" {
		b, err := strconv.ParseBool(env)
		if err != nil {
			return o, fmt.Errorf("%w: WAYMARK_SECURE_COOKIES=%q: want true or false", errUsage, env)
		}
		o.secure = b
	}
	f.fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "secure-cookies" {
			o.secure = *f.secureCookies
		}
	})
	o.serve = httpapi.ServeConfig{TLSCert: *f.tlsCert, TLSKey: *f.tlsKey, MaxClientConns: *f.maxClientConns}
	return o, nil
}

// scheme is the scheme the server speaks.
func (o httpOptions) scheme() string {
	if o.serve.TLSCert != "" {
		return "https"
	}
	return "http"
}
