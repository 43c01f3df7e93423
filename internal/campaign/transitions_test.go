package campaign

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func newCampaignRow(t *testing.T, db *store.DB, state State) int64 {
	t.Helper()
	var id int64
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		return tx.QueryRow(context.Background(), `INSERT INTO campaigns (owner_uid, skill_uid, configuration_uid, languages, concurrency, state,
			created_at, updated_at) VALUES (2, 1, 1, '[0]', 1, ?, 1, 1) RETURNING id`, string(state)).Scan(&id)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func stateOf(t *testing.T, db *store.DB, id int64) State {
	t.Helper()
	var s string
	if err := db.QueryRow(context.Background(), "SELECT state FROM campaigns WHERE id = ?", id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return State(s)
}

// Every event of the table moves exactly its from-states to its to-state;
// from any other state it loses and changes nothing.
func TestEveryEventMovesOnlyItsFromStates(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for ev, tr := range transitions {
			for _, from := range []State{Running, Paused, Cancelled, Done, BudgetReached} {
				id := newCampaignRow(t, db, from)
				won, err := fire(context.Background(), db, id, ev, 2)
				if err != nil {
					t.Fatal(err)
				}
				allowed := false
				for _, f := range tr.from {
					allowed = allowed || f == from
				}
				want := from
				if allowed {
					want = tr.to
				}
				if won != allowed || stateOf(t, db, id) != want {
					t.Errorf("%s from %s: won %v, state %s; want %v, %s", ev, from, won, stateOf(t, db, id), allowed, want)
				}
			}
		}
	})
}

// Of many concurrent pauses of one running campaign exactly one wins: each
// change is one guarded UPDATE, never a read and then a write.
func TestConcurrentChangesOfOneCampaignHaveOneWinner(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		id := newCampaignRow(t, db, Running)
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				won, err := fire(context.Background(), db, id, EventPause, 2)
				if err != nil {
					t.Error(err)
				}
				if won {
					wins.Add(1)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 || stateOf(t, db, id) != Paused {
			t.Errorf("wins %d, state %s; want one winner and paused", wins.Load(), stateOf(t, db, id))
		}
	})
}

// A budget is a JSON number of 0 or more, or none.
func TestABudgetIsANumberOfZeroOrMore(t *testing.T) {
	for raw, want := range map[string]string{"": "", "null": "", "0": "0", "12.5": "12.5", "1e3": "1e3"} {
		if got, err := parseBudget([]byte(raw)); err != nil || got != want {
			t.Errorf("parseBudget(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{`"zehn"`, "-1", "true", "[1]", "{}", "1e400"} {
		if got, err := parseBudget([]byte(raw)); err == nil {
			t.Errorf("parseBudget(%q) = %q, want an error", raw, got)
		}
	}
}
