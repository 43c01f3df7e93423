package web_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// The page names its script and style with their version; asked for so they
// come gzip-compressed to a browser that takes it, kept for a year, and a
// browser that has one gets a 304. Without the version they are revalidated.
func TestAssetsAreServedCompressedWithCacheHeaders(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		page := newBrowser(t, e).get("/login")
		m := regexp.MustCompile(`src="(/assets/app\.js\?v=[0-9a-f]+)"`).FindStringSubmatch(page.Body)
		if m == nil {
			t.Fatalf("the login page names no versioned app.js: %s", page.Body)
		}
		get := func(path string, h map[string]string) (*http.Response, []byte) {
			t.Helper()
			req, _ := http.NewRequest("GET", e.URL+path, nil)
			for k, v := range h {
				req.Header.Set(k, v)
			}
			resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp, b
		}
		plainResp, plain := get(m[1], nil)
		if plainResp.StatusCode != 200 || plainResp.Header.Get("Content-Encoding") != "" || !strings.Contains(string(plain), "use strict") {
			t.Fatalf("GET %s without gzip = %d %q", m[1], plainResp.StatusCode, plainResp.Header.Get("Content-Encoding"))
		}
		resp, body := get(m[1], map[string]string{"Accept-Encoding": "br, gzip"})
		if resp.Header.Get("Content-Encoding") != "gzip" || len(body) >= len(plain)/2 {
			t.Fatalf("GET %s with gzip = %q, %d bytes (plain %d)", m[1], resp.Header.Get("Content-Encoding"), len(body), len(plain))
		}
		zr, err := gzip.NewReader(strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		if unzipped, _ := io.ReadAll(zr); string(unzipped) != string(plain) {
			t.Error("the compressed script is not the script")
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" || !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("versioned asset: Cache-Control %q, Vary %q", cc, resp.Header.Get("Vary"))
		}
		etag := resp.Header.Get("ETag")
		if r304, b := get(m[1], map[string]string{"If-None-Match": etag}); etag == "" || r304.StatusCode != http.StatusNotModified || len(b) != 0 {
			t.Errorf("GET with If-None-Match %q = %d", etag, r304.StatusCode)
		}
		if r, _ := get("/assets/app.js", nil); r.Header.Get("Cache-Control") != "public, no-cache" || r.Header.Get("ETag") != etag {
			t.Errorf("unversioned asset: Cache-Control %q, ETag %q", r.Header.Get("Cache-Control"), r.Header.Get("ETag"))
		}
		if r, _ := get("/assets/app.js", map[string]string{"Accept-Encoding": "gzip;q=0"}); r.Header.Get("Content-Encoding") != "" {
			t.Error("gzip sent to a client that refuses it")
		}
		if r, _ := get("/assets/nothing.js", nil); r.StatusCode != http.StatusNotFound {
			t.Errorf("unknown asset = %d", r.StatusCode)
		}
	})
}
