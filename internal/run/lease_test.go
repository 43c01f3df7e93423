package run_test

import (
	"testing"
	"time"

	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestExpiredLeasesFollowTheClock(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		short, long := b.queued(t), b.queued(t)
		if won, err := b.store.Claim(b.ctx, short, owner, time.Minute); !won || err != nil {
			t.Fatalf("Claim short = %v, %v", won, err)
		}
		if won, err := b.store.Claim(b.ctx, long, owner, 10*time.Minute); !won || err != nil {
			t.Fatalf("Claim long = %v, %v", won, err)
		}
		if got := b.get(t, short).LeaseExpiresAt; !got.Equal(t0.Add(time.Minute)) {
			t.Errorf("lease expiry %v, want %v", got, t0.Add(time.Minute))
		}
		expired := func() []string {
			rs, err := b.store.ExpiredLeases(b.ctx, b.clk.Now())
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range rs {
				ids = append(ids, r.UUID)
			}
			return ids
		}
		if ids := expired(); len(ids) != 0 {
			t.Errorf("expired at start = %v, want none", ids)
		}
		b.clk.Advance(5 * time.Minute)
		if ids := expired(); len(ids) != 1 || ids[0] != short {
			t.Errorf("expired after 5m = %v, want [%s]", ids, short)
		}
		// A renewal before the reaper acts wins over it.
		if won, err := b.store.Renew(b.ctx, short, run.Renewal{Owner: owner, Lease: lease}); !won || err != nil {
			t.Fatalf("Renew = %v, %v", won, err)
		}
		if won, err := b.store.RequeueExpired(b.ctx, short, run.Requeuing{Owner: owner, Requeues: 0}); won || err != nil {
			t.Errorf("RequeueExpired of a renewed lease = %v, %v; want a loss", won, err)
		}
		if won, err := b.store.SettleExpired(b.ctx, short, run.Settlement{Owner: owner, Reason: run.ReasonRetriesExhausted, ErrClass: "lease_lost"}); won || err != nil {
			t.Errorf("SettleExpired of a renewed lease = %v, %v; want a loss", won, err)
		}
		b.clk.Advance(time.Hour)
		if ids := expired(); len(ids) != 2 {
			t.Errorf("expired after 1h = %v, want both", ids)
		}
		if won, err := b.store.RequeueExpired(b.ctx, short, run.Requeuing{Owner: owner, Requeues: 0}); !won || err != nil {
			t.Fatalf("RequeueExpired = %v, %v", won, err)
		}
		r := b.get(t, short)
		if r.Status != run.StatusQueued || r.RequeueCount != 1 || r.LeaseOwner != "" || !r.LeaseExpiresAt.IsZero() || r.Request == nil {
			t.Errorf("requeued run = %+v", r)
		}
		if won, err := b.store.SettleExpired(b.ctx, long, run.Settlement{Owner: owner, Reason: run.ReasonRetriesExhausted, ErrClass: "lease_lost", ErrMsg: "lease expired"}); !won || err != nil {
			t.Fatalf("SettleExpired = %v, %v", won, err)
		}
		if r := b.get(t, long); r.Status != run.StatusFailed || r.Reason != run.ReasonRetriesExhausted || r.ErrorClass != "lease_lost" {
			t.Errorf("dead-lettered run = %+v", r)
		}
		if ids := expired(); len(ids) != 0 {
			t.Errorf("expired after reaping = %v, want none", ids)
		}
	})
}

func TestFenceAndUsageAreStoredOnTheRun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		effect := `{"call":"call_1","effect":"non_idempotent_write"}`
		if won, err := b.store.SetFence(b.ctx, id, owner, []byte(effect)); !won || err != nil {
			t.Fatalf("SetFence = %v, %v", won, err)
		}
		if got := string(b.get(t, id).PendingEffect); got != effect {
			t.Errorf("pending effect %s, want %s", got, effect)
		}
		for range 2 {
			if won, err := b.store.AddUsage(b.ctx, id, owner, run.Usage{PromptTokens: 100, CompletionTokens: 20, Iterations: 1}); !won || err != nil {
				t.Fatalf("AddUsage = %v, %v", won, err)
			}
		}
		if won, err := b.store.ClearFence(b.ctx, id, owner); !won || err != nil {
			t.Fatalf("ClearFence = %v, %v", won, err)
		}
		r := b.get(t, id)
		if r.PendingEffect != nil || r.Usage != (run.Usage{PromptTokens: 200, CompletionTokens: 40, Iterations: 2}) {
			t.Errorf("run = fence %s usage %+v", r.PendingEffect, r.Usage)
		}
	})
}
