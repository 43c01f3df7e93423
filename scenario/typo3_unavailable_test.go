package scenario_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/demo"
	"waymark/internal/typo3/typo3test"
)

// While the TYPO3 database does not answer, a request that needs it — the
// caller's rights, a login, a page — is refused 503 typo3_unavailable with
// a sentence saying to try again (not 500 internal), and nothing changes.
func TestWhileTYPO3DoesNotAnswerRequestsAre503AndNothingChanges(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		proxy := typo3test.NewProxy(t, t3.Addr)
		reads := t3
		reads.DB = t3.Via(proxy.Addr) // every read of TYPO3 goes through the proxy
		e := besideTYPO3(t, nil, reads, string(demo.Fixture), nil)
		erika := e.As("demo-token-erika")
		erika.Must("GET", "/api/me", nil, http.StatusOK)

		proxy.Stop() // the TYPO3 database goes away
		for _, r := range []struct{ method, path string }{{"GET", "/api/me"}, {"GET", "/api/pages/2/open-points"},
			{"POST", "/api/conversations"}} {
			got := erika.Do(r.method, r.path, map[string]any{"page": 2, "language": 0, "skill": 1})
			if got.Status != http.StatusServiceUnavailable || got.ErrorCode() != "typo3_unavailable" {
				t.Errorf("%s %s while TYPO3 is away = %d %s, want 503 typo3_unavailable", r.method, r.path, got.Status, got.Body)
			}
		}
		// The web UI says it in a sentence an editor can act on.
		if page := erika.Do("GET", "/dashboard", nil); page.Status != http.StatusServiceUnavailable ||
			!strings.Contains(string(page.Body), "TYPO3") || !strings.Contains(string(page.Body), "try again") && !strings.Contains(string(page.Body), "versuche es") {
			t.Errorf("the dashboard while TYPO3 is away = %d %s, want 503 with a sentence naming TYPO3", page.Status, page.Body)
		}
		login := e.As("").Do("POST", "/api/login", map[string]any{"username": "erika", "password": "erika-demo-pass"})
		if login.Status != http.StatusServiceUnavailable || login.ErrorCode() != "typo3_unavailable" {
			t.Errorf("login while TYPO3 is away = %d %s, want 503 typo3_unavailable", login.Status, login.Body)
		}

		var n int
		if err := e.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM conversations").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d conversations after the refused start, want none", n)
		}
	})
}
