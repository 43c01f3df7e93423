package adr228_test

import (
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L4.1, L4.2: the lineage is an event with ids and a digest, stored at privacy
// metadata; a continuation derives the process from its predecessor.
func TestL4_1_L4_2_ContinuationCarriesTheLineage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("one"), answer("two"))
		erika := e.As(wt.Erika)
		first := invoke(t, erika, 1, nil)
		id := first["uuid"].(string)
		l := lineage(t, erika, id)
		pin, _ := l["pin"].(map[string]any)
		if l["configuration"] != 1.0 || pin == nil || pin["skill"] != 12.0 || l["processSkill"] != "seo" || l["origin"] != id ||
			l["released"] != false {
			t.Fatalf("lineage of the start = %v", l)
		}
		next := continueRun(t, erika, 1, id)
		nl := lineage(t, erika, next["uuid"].(string))
		if nl["origin"] != id || nl["predecessor"] != id || nl["pin"] == nil {
			t.Fatalf("lineage of the continuation = %v", nl)
		}
		if next["holdsProcess"] != true || next["processSkill"] != "seo" {
			t.Fatalf("continuation status = %v", next)
		}
		// The continuation composed the process from its snapshot.
		reqs := e.LLM.Requests()
		if sys := systemOf(reqs[1].Messages); sys == "" || !strings.Contains(sys, "PROCESS-SEO-V1") {
			t.Errorf("continuation system = %q", sys)
		}
	})
}

// L4.6: a predecessor that never existed and one of another user answer alike:
// the turn goes on without a process, with notice predecessor_gone uid 0.
func TestL4_6_PredecessorGoneAnswersAlike(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("paula's"), answer("a"), answer("b"))
		foreign := invoke(t, e.As(wt.Paula), 1, nil)["uuid"].(string)
		erika := e.As(wt.Erika)
		for _, pred := range []string{"00000000-0000-4000-8000-000000000000", foreign} {
			st := continueRun(t, erika, 1, pred)
			n, _ := st["notices"].([]any)
			if st["status"] != "completed" || st["holdsProcess"] != false || len(n) != 1 {
				t.Fatalf("continuation of %s = %v", pred, st)
			}
			notice := n[0].(map[string]any)
			if notice["kind"] != "dropped_source" || notice["reason"] != "predecessor_gone" || notice["uid"] != 0.0 {
				t.Errorf("notice = %v", notice)
			}
		}
	})
}

// L4.9: a predecessor holding a process must be terminal.
func TestL4_9_WaitingPredecessorWithAProcessIsNotFinished(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(call("c1", "update_page_metadata", `{"page": 1, "fields": {"description": "A description long enough? Not needed."}}`))
		erika := e.As(wt.Erika)
		first := invoke(t, erika, 1, nil)
		if first["status"] != "waiting_for_approval" {
			t.Fatalf("first = %v", first)
		}
		next := continueRun(t, erika, 1, first["uuid"].(string))
		if next["status"] != "failed" || next["refusal"] != "predecessor_not_finished" {
			t.Fatalf("continuation of a waiting process turn = %v", next)
		}
	})
}
