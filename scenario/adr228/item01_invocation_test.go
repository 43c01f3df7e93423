package adr228_test

import (
	"context"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L1.1, L1.2: the invocation survives the queue codec: a queued run started
// with it is worked at pickup and holds the process.
func TestL1_1_L1_2_InvocationSurvivesTheQueueCodec(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("ok"))
		erika := e.As(wt.Erika)
		id := startSEOQueued(t, erika, 1).UUID
		if err := e.App.Runtime.RunQueued(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		got := erika.MustRun(id)
		if got.Status != "completed" || got.ProcessSkill != "seo" || !got.HoldsProcessIs(true) {
			t.Fatalf("queued process run = %+v", got)
		}
		l := lineage(t, erika, id)
		if l == nil || l.Pin == nil || l.Origin != id {
			t.Fatalf("lineage = %+v", l)
		}
	})
}

// L1.3, L2.5, L2.7: a stored request that cannot be decoded refuses the run
// at pickup, in every shape of unreadable: failed, policy_denied, refusal
// request_unreadable, visible in the status — never run as an ordinary turn,
// never not_retryable, outside the queue's recovery. The refusal does not
// end the process: a queued continuation whose request became unreadable
// records a lineage without a pin naming the predecessor its opening
// request event names, so the turn continued from it still holds the
// process.
func TestL1_3_UndecodableStoredRequestSettlesAsARefusal(t *testing.T) {
	shapes := map[string]string{
		"a wrongly typed invocation": `{"v":1,"initiator":2,"request":{"configuration":1,"messages":[{"role":"user","content":"x"}],"invocation":{"skill":"twelve"}}}`,
		"not JSON":                   `not json`,
		"an unknown version":         `{"v":7,"initiator":2,"request":{"configuration":1,"messages":[{"role":"user","content":"x"}]}}`,
		"an unknown field":           `{"v":1,"initiator":2,"request":{"configuration":1,"pin":{"skill":12}}}`,
	}
	for name, stored := range shapes {
		t.Run(name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db, nil)
				e.LLM.Add(answer("one"), answer("after"))
				erika := e.As(wt.Erika)
				first := startSEO(t, erika, 1).UUID
				id := continued(t, erika, 1, first, true).UUID
				exec(t, db, `UPDATE runs SET request = ? WHERE uuid = ?`, stored, id)
				if err := e.App.Runtime.RunQueued(context.Background(), id); err != nil {
					t.Fatal(err)
				}
				got := erika.MustRun(id)
				if got.Status != "failed" || got.TerminationReason != "policy_denied" ||
					got.ErrorClass != "process_invocation_refused" || got.Refusal != "request_unreadable" {
					t.Fatalf("run = %+v, want failed policy_denied, refusal request_unreadable", got)
				}
				if n := len(e.LLM.Requests()); n != 1 {
					t.Errorf("model calls = %d, want 1 (the first turn only)", n)
				}
				if rep, err := e.App.Runtime.Reap(context.Background()); err != nil || rep.Requeued+rep.DeadLettered != 0 {
					t.Errorf("the refusal reached the queue's recovery: %+v %v", rep, err)
				}
				next := continued(t, erika, 1, id, false)
				if next.Status != "completed" || !next.HoldsProcessIs(true) || next.ProcessSkill != "seo" {
					t.Fatalf("the turn continued from the refused run = %+v, want it to hold the process", next)
				}
			})
		})
	}
}
