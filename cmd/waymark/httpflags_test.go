package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --secure-cookies defaults to on for an https public URL
// (and for TLS), WAYMARK_SECURE_COOKIES overrides the default, the flag
// overrides both; bad values are usage errors naming the flag.
func TestSecureCookiesFollowThePublicURLUnlessSetExplicitly(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	for _, f := range []string{cert, key} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		args    []string
		env     string
		want    bool
		wantErr string
	}{
		{nil, "", false, ""},
		{[]string{"--public-url", "http://cms.example"}, "", false, ""},
		{[]string{"--public-url", "https://cms.example"}, "", true, ""},
		{[]string{"--public-url", "https://cms.example", "--secure-cookies=false"}, "", false, ""},
		{[]string{"--public-url", "https://cms.example"}, "false", false, ""},
		{[]string{"--secure-cookies"}, "", true, ""},
		{nil, "true", true, ""},
		{[]string{"--tls-cert", cert, "--tls-key", key}, "", true, ""},
		{[]string{"--public-url", "cms.example"}, "", false, "--public-url"},
		{[]string{"--tls-cert", cert}, "", false, "--tls-cert and --tls-key"},
		{[]string{"--tls-cert", cert, "--tls-key", filepath.Join(dir, "missing.pem")}, "", false, "missing.pem"},
		{[]string{"--max-client-conns", "0"}, "", false, "--max-client-conns"},
		{nil, "maybe", false, "WAYMARK_SECURE_COOKIES"},
	}
	for _, c := range cases {
		t.Setenv("WAYMARK_SECURE_COOKIES", c.env)
		f := newFlags("serve", io.Discard)
		if err := f.parse(c.args); err != nil {
			// A bad environment value is refused as early as parse.
			if c.wantErr != "" && errors.Is(err, errUsage) && strings.Contains(err.Error(), c.wantErr) {
				continue
			}
			t.Fatalf("parse %v: %v", c.args, err)
		}
		o, err := f.httpOptions()
		if c.wantErr != "" {
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("resolve(%v, env %q) = %v, want a usage error naming %q", c.args, c.env, err, c.wantErr)
			}
			continue
		}
		if err != nil || o.secure != c.want {
			t.Errorf("resolve(%v, env %q) = secure %v, %v; want %v", c.args, c.env, o.secure, err, c.want)
		}
	}
}
