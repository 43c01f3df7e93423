package web_test

import (
	"context"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"waymark/internal/catalog"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// A page or an action while the database does not answer — cut off, as
// while the server restarts — is a 503 with Retry-After and the catalog's
// sentence in the editor's language (wait a moment, reload before you
// repeat), as the API answers 503 database_unavailable; once the database
// is back the same page answers as before. Both ways a page meets the
// outage: its session's check (GET /chat) and a read after the session was
// checked (a message whose claim found the database gone). Before, both
// were 500 with "internal error". PostgreSQL through a proxy the test cuts
// (SQLite has no outage).
func TestAPageWhileTheDatabaseDoesNotAnswerIs503WithRetryAfterInTheEditorsLanguage(t *testing.T) {
	t.Parallel()
	raw := storetest.PostgresURL(t)
	proxy := storetest.NewProxy(t, raw)
	db, err := store.Open(context.Background(), proxy.URL(raw))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	var cutOnClaim atomic.Bool
	e := wt.New(t, db, site, &wt.Options{APIOnly: true, BeforeClaim: func(op string) {
		if op == "message" && cutOnClaim.Load() {
			proxy.Cut()
		}
	}})
	erika := login(t, e, "erika", "erika-pass-1234") // German
	paula := login(t, e, "paula", "paula-pass-1234") // English
	a := erika.post("/chat", url.Values{"page": {"1"}, "language": {"0"}})
	path := a.Header.Get("HX-Redirect")
	if !convPath.MatchString(path) {
		t.Fatalf("start = %d %q: %s", a.Status, path, a.Body)
	}
	want503 := func(what string, a answer, lang string) {
		t.Helper()
		if a.Status != http.StatusServiceUnavailable {
			t.Errorf("%s = %d, want 503: %s", what, a.Status, a.Body)
		}
		if a.Header.Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", what)
		}
		contains(t, what, a, catalog.For(lang).Get("error.database_unavailable"))
	}

	cutOnClaim.Store(true)
	want503("a message whose claim found the database gone", erika.post(path+"/messages", url.Values{"content": {"Hallo"}}), "de")
	want503("the conversation list (English) while the database does not answer", paula.get("/chat"), "en")
	// A session that cannot be read has no editor yet: the browser's language.
	want503("a conversation (German browser) while the database does not answer", erika.do(http.MethodGet, path, nil, "de"), "de")

	// The outage lasts as a short restart does: a pooled connection idle
	// for more than a second is checked before it is used again.
	time.Sleep(1500 * time.Millisecond)
	if err := proxy.Restore(); err != nil {
		t.Fatal(err)
	}
	if a := erika.get(path); a.Status != http.StatusOK {
		t.Errorf("GET %s once the database is back = %d %s, want 200", path, a.Status, a.Body)
	}
}
