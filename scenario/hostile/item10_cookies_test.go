package hostile_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"waymark/internal/httpapi"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

func sessionCookie(t *testing.T, r wt.Response) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == httpapi.SessionCookie {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", httpapi.SessionCookie, r.Header)
	return nil
}

// With secure cookies on (behind a TLS proxy the server
// itself speaks plain HTTP) the session cookie is Secure; off, it is not.
func TestSessionCookieIsSecureWhenConfigured(t *testing.T) {
	for _, secure := range []bool{true, false} {
		e := newLoginEnvWith(t, storetest.SQLite(t), &wt.Options{SecureCookies: secure})
		r := login(e, "erika2", "erika-pw")
		if r.Status != http.StatusOK {
			t.Fatalf("login = %d %s", r.Status, r.Body)
		}
		if c := sessionCookie(t, r); c.Secure != secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
			t.Errorf("SecureCookies %v: cookie %+v, want Secure %v, HttpOnly, SameSite=Lax", secure, c, secure)
		}
	}
}

// The CSRF token is stored only as a hash, like the
// session id, and still guards state-changing requests of the session.
func TestCSRFTokenIsStoredHashed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newLoginEnvWith(t, db, nil)
		r := login(e, "erika2", "erika-pw")
		var ans struct {
			CSRFToken string `json:"csrfToken"`
		}
		r.JSON(t, &ans)
		cookie := sessionCookie(t, r)
		var idHash, csrf string
		if err := db.QueryRow(context.Background(), "SELECT id_hash, csrf FROM sessions").Scan(&idHash, &csrf); err != nil {
			t.Fatal(err)
		}
		if ans.CSRFToken == "" || strings.Contains(csrf, ans.CSRFToken) || strings.Contains(idHash, cookie.Value) {
			t.Errorf("stored session (id %q, csrf %q) holds the cookie %q or the CSRF token %q in clear", idHash, csrf, cookie.Value, ans.CSRFToken)
		}
		post := func(token string) int {
			req, _ := http.NewRequest("POST", e.URL+"/api/logout", nil)
			req.AddCookie(cookie)
			req.Header.Set(httpapi.CSRFHeader, token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res.StatusCode
		}
		if got := post(ans.CSRFToken + "x"); got != http.StatusForbidden {
			t.Errorf("logout with a wrong CSRF token = %d, want 403", got)
		}
		if got := post(ans.CSRFToken); got != http.StatusNoContent {
			t.Errorf("logout with the CSRF token = %d, want 204", got)
		}
	})
}

// With a certificate and key the server speaks HTTPS.
func TestServerSpeaksTLSWithCertificateAndKey(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	e := wt.New(t, storetest.SQLite(t), wt.Site, nil)
	addr := serveReal(t, e.App.Handler(), httpapi.ServeConfig{TLSCert: certFile, TLSKey: keyFile})
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	res, err := client.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("GET https://…/healthz: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || res.TLS == nil {
		t.Errorf("https healthz = %d %s (TLS %v), want 200 over TLS", res.StatusCode, b, res.TLS != nil)
	}
	if err := httpapi.ServeWith(context.Background(), "127.0.0.1:0", e.App.Handler(), &httpapi.ServeConfig{TLSCert: certFile}); err == nil ||
		!strings.Contains(err.Error(), "both") {
		t.Errorf("ServeWith with a certificate but no key = %v, want an error naming both files", err)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key and returns
// their files and a pool trusting the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "waymark test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
