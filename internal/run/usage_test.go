package run_test

import (
	"testing"

	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// A priced transition keeps its usage row whether or not it flushes events
// with it (on PostgreSQL the transition and its events are one statement,
// which must carry the usage row too), and a lost one keeps none.
func TestAPricedTransitionKeepsItsUsageRowWithOrWithoutEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		usage := func(id string) (n, prompt, completion int64) {
			t.Helper()
			if err := db.QueryRow(b.ctx, `SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0)
				FROM run_usage WHERE run_uuid = ?`, id).Scan(&n, &prompt, &completion); err != nil {
				t.Fatalf("read usage: %v", err)
			}
			return n, prompt, completion
		}
		ev := []run.NewEvent{{Kind: run.EventNotice, Payload: map[string]any{"n": 1}}}
		for _, tc := range []struct {
			name   string
			events []run.NewEvent
		}{{"without events", nil}, {"with events", ev}} {
			id := b.in(t, run.StatusRunning)
			won, err := b.store.RenewTx(b.ctx, nil, id, run.Renewal{Owner: owner, Lease: lease},
				run.Flush{Events: tc.events, Usage: run.Usage{PromptTokens: 10, CompletionTokens: 5, Iterations: 1}, Privacy: run.PrivacyFull})
			if err != nil || !won {
				t.Fatalf("%s: renew = %v, %v", tc.name, won, err)
			}
			if n, p, c := usage(id); n != 1 || p != 10 || c != 5 {
				t.Errorf("%s: usage rows = %d (%d prompt, %d completion tokens), want 1 (10, 5)", tc.name, n, p, c)
			}
			won, err = b.store.RenewTx(b.ctx, nil, id, run.Renewal{Owner: "worker:other", Lease: lease},
				run.Flush{Events: tc.events, Usage: run.Usage{PromptTokens: 7, CompletionTokens: 3, Iterations: 1}, Privacy: run.PrivacyFull})
			if err != nil || won {
				t.Fatalf("%s: another owner's renew = %v, %v, want lost", tc.name, won, err)
			}
			if n, _, _ := usage(id); n != 1 {
				t.Errorf("%s: a lost transition left usage rows = %d, want still 1", tc.name, n)
			}
		}
	})
}
