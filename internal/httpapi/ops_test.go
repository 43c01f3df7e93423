package httpapi_test

import (
	"context"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"waymark/internal/httpapi"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestHealthzAnswersOK(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := newServer(t, db)
		a := b.do(t, call{method: "GET", path: "/healthz"})
		if a.status != http.StatusOK || decode[map[string]string](t, a)["status"] != "ok" {
			t.Errorf("GET /healthz = %d %s, want 200 status ok", a.status, a.body)
		}
	})
}

func TestReadyzAnswers200OnMigratedDatabase(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := newServer(t, db)
		if a := b.do(t, call{method: "GET", path: "/readyz"}); a.status != http.StatusOK {
			t.Errorf("GET /readyz = %d %s, want 200", a.status, a.body)
		}
	})
}

func TestReadyzAnswers503AfterDatabaseClosed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := newServer(t, db)
		db.Close()
		a := b.do(t, call{method: "GET", path: "/readyz"})
		if msg := wantError(t, "GET /readyz on closed db", a, http.StatusServiceUnavailable, "not_ready"); !strings.Contains(msg, "unreachable") {
			t.Errorf("GET /readyz on closed db says %q, want it to name the database", msg)
		}
	})
}

func TestReadyzAnswers503OnUnmigratedDatabase(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, migrated *store.DB) {
		url := "sqlite:" + filepath.Join(t.TempDir(), "fresh.db")
		if migrated.Dialect() == store.Postgres {
			url = storetest.PostgresURL(t)
		}
		db, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		b := newServer(t, db)
		a := b.do(t, call{method: "GET", path: "/readyz"})
		if msg := wantError(t, "GET /readyz unmigrated", a, http.StatusServiceUnavailable, "not_ready"); !strings.Contains(msg, "migrat") {
			t.Errorf("GET /readyz unmigrated says %q, want it to name migrations", msg)
		}
	})
}

func TestMetricsCountRequestsByRoute(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		b.do(t, call{method: "GET", path: "/api/me", token: erikaToken})
		b.do(t, call{method: "GET", path: "/api/me", token: "wm_wrong_token_0001"})
		a := b.do(t, call{method: "GET", path: "/metrics"})
		if a.status != http.StatusOK {
			t.Fatalf("GET /metrics = %d", a.status)
		}
		for _, want := range []string{
			`http_requests_total{code="200",method="GET",route="/api/me"} 1`,
			`http_requests_total{code="401",method="GET",route="/api/me"} 1`,
			`http_request_duration_seconds_bucket{method="GET",route="/api/me"`,
			"go_goroutines",
		} {
			if !strings.Contains(string(a.body), want) {
				t.Errorf("GET /metrics lacks %s", want)
			}
		}
	})
}

func TestRequestIDIsEchoedOrMadeAndLogged(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		a := b.do(t, call{method: "GET", path: "/api/me", token: erikaToken, requestID: "req-abc-123"})
		if got := a.header.Get("X-Request-Id"); got != "req-abc-123" {
			t.Errorf("X-Request-Id = %q, want the client's req-abc-123", got)
		}
		logs := b.logs.String()
		for _, want := range []string{"method=GET", "path=/api/me", "status=200", "request_id=req-abc-123", "user=7", "duration="} {
			if !strings.Contains(logs, want) {
				t.Errorf("access log lacks %s:\n%s", want, logs)
			}
		}
		first := b.do(t, call{method: "GET", path: "/healthz"}).header.Get("X-Request-Id")
		second := b.do(t, call{method: "GET", path: "/healthz", requestID: "bad id with spaces"}).header.Get("X-Request-Id")
		if first == "" || second == "" || first == second || strings.Contains(second, " ") {
			t.Errorf("made request ids %q and %q, want two distinct ids without spaces", first, second)
		}
	})
}

func TestUnknownRouteAndWrongMethodAnswerErrorJSON(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := newServer(t, db)
		wantError(t, "GET /api/nothing", b.do(t, call{method: "GET", path: "/api/nothing"}), http.StatusNotFound, "not_found")
		a := b.do(t, call{method: "DELETE", path: "/api/me"})
		wantError(t, "DELETE /api/me", a, http.StatusMethodNotAllowed, "method_not_allowed")
		if !strings.Contains(a.header.Get("Allow"), "GET") {
			t.Errorf("DELETE /api/me Allow = %q, want GET", a.header.Get("Allow"))
		}
	})
}

// /healthz names the build: the version and commit the server was given
// (app.New gives it those of `waymark version`).
func TestHealthzNamesTheVersionAndCommit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := newServer(t, db, func(c *httpapi.Config) { c.Version, c.Commit = "v1.2.3", "0123abc" })
		a := b.do(t, call{method: "GET", path: "/healthz"})
		got := decode[map[string]string](t, a)
		if a.status != http.StatusOK || got["version"] != "v1.2.3" || got["commit"] != "0123abc" {
			t.Errorf("GET /healthz = %d %s, want version v1.2.3 and commit 0123abc", a.status, a.body)
		}
	})
}

// waymark_build_info is 1 with the build in its labels, so a dashboard can
// tell which processes run which build.
func TestMetricsCarryTheBuildInfo(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := newServer(t, db, func(c *httpapi.Config) { c.Version, c.Commit = "v1.2.3", "0123abc" })
		a := b.do(t, call{method: "GET", path: "/metrics"})
		want := `waymark_build_info{commit="0123abc",goversion="` + runtime.Version() + `",version="v1.2.3"} 1`
		if a.status != http.StatusOK || !strings.Contains(string(a.body), want) {
			t.Errorf("GET /metrics = %d, lacks %s", a.status, want)
		}
	})
}

// Health probes and scrapes come every few seconds: they are counted in
// the request metrics but make no access-log line and no span, while a
// request of a person makes both.
func TestProbesAreNeitherAccessLoggedNorTraced(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		spans := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
		b := setup(t, db, func(c *httpapi.Config) { c.Tracer = tp.Tracer("test") })
		for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
			if a := b.do(t, call{method: "GET", path: path}); a.status != http.StatusOK {
				t.Fatalf("GET %s = %d %s", path, a.status, a.body)
			}
		}
		if logs := b.logs.String(); strings.Contains(logs, "msg=request") {
			t.Errorf("probes were access-logged:\n%s", logs)
		}
		if got := spans.GetSpans(); len(got) != 0 {
			t.Errorf("probes made %d spans, want none (first: %s)", len(got), got[0].Name)
		}
		b.do(t, call{method: "GET", path: "/api/me", token: erikaToken})
		if logs := b.logs.String(); !strings.Contains(logs, "path=/api/me") || strings.Contains(logs, "path=/healthz") {
			t.Errorf("access log after GET /api/me:\n%s", logs)
		}
		if got := spans.GetSpans(); len(got) != 1 || got[0].Name != "HTTP GET /api/me" {
			t.Errorf("spans after GET /api/me = %v, want one named HTTP GET /api/me", got)
		}
		a := b.do(t, call{method: "GET", path: "/metrics"})
		if !strings.Contains(string(a.body), `http_requests_total{code="200",method="GET",route="/healthz"} 1`) {
			t.Errorf("GET /metrics does not count the probe of /healthz")
		}
	})
}
