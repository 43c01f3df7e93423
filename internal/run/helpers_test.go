package run_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"waymark/internal/clock"
	"waymark/internal/run"
	"waymark/internal/store"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

const (
	owner = "worker:a"
	lease = 15 * time.Minute
)

type bundle struct {
	ctx   context.Context
	db    *store.DB
	clk   *clock.Fake
	store *run.Store
}

func setup(t *testing.T, db *store.DB) bundle {
	t.Helper()
	clk := clock.NewFake(t0)
	return bundle{ctx: context.Background(), db: db, clk: clk, store: run.NewStore(db, clk)}
}

// queued creates a queued run and returns its uuid.
func (b bundle) queued(t *testing.T) string {
	t.Helper()
	id := uuid.NewString()
	err := b.store.Create(b.ctx, run.Run{UUID: id, Configuration: 3, Initiator: 7, Status: run.StatusQueued,
		Request: []byte(`{"messages":[{"role":"user","content":"hi"}]}`), AllowedTools: []string{"read_page"}})
	if err != nil {
		t.Fatalf("Create queued: %v", err)
	}
	return id
}

// in returns a run brought to status st through the store's own transitions.
// Running and fenced runs are held by owner.
func (b bundle) in(t *testing.T, st run.Status) string {
	t.Helper()
	id := b.queued(t)
	must := func(op string, won bool, err error) {
		t.Helper()
		if err != nil || !won {
			t.Fatalf("%s to reach %s = %v, %v", op, st, won, err)
		}
	}
	if st == run.StatusQueued {
		return id
	}
	if st == run.StatusCancelled {
		won, err := b.store.Cancel(b.ctx, id)
		must("Cancel", won, err)
		return id
	}
	won, err := b.store.Claim(b.ctx, id, owner, lease)
	must("Claim", won, err)
	switch st {
	case run.StatusWaitingForApproval, run.StatusWaitingForInput:
		won, err = b.store.Suspend(b.ctx, id, run.Suspension{Owner: owner, To: st, State: []byte(`{"pending":["call_1"]}`)})
		must("Suspend", won, err)
	case run.StatusCompleted:
		won, err = b.store.Settle(b.ctx, id, run.Settlement{Owner: owner, Status: st, Reason: run.ReasonCompleted})
		must("Settle", won, err)
	case run.StatusFailed:
		won, err = b.store.Settle(b.ctx, id, run.Settlement{Owner: owner, Status: st, Reason: run.ReasonProviderFailed, ErrClass: "provider", ErrMsg: "boom"})
		must("Settle", won, err)
	}
	return id
}

func (b bundle) get(t *testing.T, id string) run.Run {
	t.Helper()
	r, err := b.store.Get(b.ctx, id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return r
}

// rawPayloads returns the payload column of every stored event of the run.
func (b bundle) rawPayloads(t *testing.T, id string) []string {
	t.Helper()
	rows, err := b.db.Query(b.ctx, "SELECT payload FROM run_events WHERE run_uuid = ? ORDER BY sequence", id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (b bundle) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := b.db.QueryRow(b.ctx, query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
