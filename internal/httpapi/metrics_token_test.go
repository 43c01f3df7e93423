package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"waymark/internal/httpapi"
	"waymark/internal/store/storetest"
)

// With a metrics token /metrics answers only a request
// bearing it, so /metrics need not be public; without one it stays open.
func TestMetricsTokenKeepsMetricsPrivate(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	srv, err := httpapi.New(httpapi.Deps{DB: db}, &httpapi.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MetricsToken: "scrape-secret-1"})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	get := func(auth string) (int, string) {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for _, auth := range []string{"", "Bearer wrong", "Bearer scrape-secret-12", "scrape-secret-1"} {
		if code, body := get(auth); code != http.StatusUnauthorized || strings.Contains(body, "go_goroutines") {
			t.Errorf("GET /metrics with %q = %d %.80s, want 401 without metrics", auth, code, body)
		}
	}
	if code, body := get("Bearer scrape-secret-1"); code != http.StatusOK || !strings.Contains(body, "go_goroutines") {
		t.Errorf("GET /metrics with the token = %d %.80s", code, body)
	}
}
