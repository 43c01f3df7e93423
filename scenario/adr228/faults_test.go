package adr228_test

import (
	"context"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// failLineageWrites makes the database refuse every insert of a lineage
// event — a real fault of the store, not a stand-in — until the returned
// function lifts it.
func failLineageWrites(t *testing.T, db *store.DB) (lift func()) {
	t.Helper()
	if db.Dialect() == store.SQLite {
		exec(t, db, `CREATE TRIGGER fail_lineage BEFORE INSERT ON run_events WHEN NEW.kind = 'lineage'
			BEGIN SELECT RAISE(ABORT, 'injected fault: lineage cannot be stored'); END`)
		return func() { exec(t, db, `DROP TRIGGER fail_lineage`) }
	}
	exec(t, db, `CREATE FUNCTION fail_lineage() RETURNS trigger AS $$
		BEGIN
			IF NEW.kind = 'lineage' THEN RAISE EXCEPTION 'injected fault: lineage cannot be stored'; END IF;
			RETURN NEW;
		END $$ LANGUAGE plpgsql`)
	exec(t, db, `CREATE TRIGGER fail_lineage BEFORE INSERT ON run_events FOR EACH ROW EXECUTE FUNCTION fail_lineage()`)
	return func() {
		exec(t, db, `DROP TRIGGER fail_lineage ON run_events`)
		exec(t, db, `DROP FUNCTION fail_lineage()`)
	}
}

// L7.11: a release that cannot be stored fails and leaves the run holding
// its process; the same request again completes it.
func TestL7_11_FailedReleaseLeavesTheRunHoldingAndARetryCompletesIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("one"))
		erika := e.As(wt.Erika)
		id := invoke(t, erika, 1, nil)["uuid"].(string)
		lift := failLineageWrites(t, db)
		if r := erika.Do("POST", "/api/runs/"+id+"/end-process", nil); r.Status != 500 {
			t.Fatalf("end-process while the lineage cannot be stored = %d %s, want 500", r.Status, r.Body)
		}
		if st := erika.Must("GET", "/api/runs/"+id, nil, 200).Map(t); st["holdsProcess"] != true || st["status"] != "completed" {
			t.Fatalf("after the failed release: %v, want the run completed and still holding", st)
		}
		lift()
		got := erika.Must("POST", "/api/runs/"+id+"/end-process", nil, 200).Map(t)
		if got["ended"] != true || got["status"] != "completed" {
			t.Fatalf("retried end-process = %v", got)
		}
		if st := erika.Must("GET", "/api/runs/"+id, nil, 200).Map(t); st["holdsProcess"] != false {
			t.Fatalf("after the retry: holdsProcess %v, want false", st["holdsProcess"])
		}
		if l := lineage(t, erika, id); l == nil || l["released"] != true {
			t.Errorf("latest lineage = %v, want released", l)
		}
	})
}

// L4.4: an interactive continuation whose lineage cannot be stored is
// refused (lineage_unreadable) before the model is asked, and is not left
// running; the refusal does not end the process: the next turn, once the
// store works, continues it.
func TestL4_4_ContinuationThatCannotStoreItsLineageIsRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("one"), answer("three"))
		erika := e.As(wt.Erika)
		first := invoke(t, erika, 1, nil)["uuid"].(string)
		lift := failLineageWrites(t, db)
		second := erika.Must("POST", "/api/runs", map[string]any{"configuration": 1, "predecessorRunUuid": first,
			"messages": []map[string]string{{"role": "user", "content": "weiter"}}}, 201).Map(t)
		lift()
		id := second["uuid"].(string)
		st := erika.Must("GET", "/api/runs/"+id, nil, 200).Map(t)
		if st["status"] != "failed" || st["terminationReason"] != "policy_denied" ||
			st["errorClass"] != "process_invocation_refused" || st["refusal"] != "lineage_unreadable" {
			t.Fatalf("continuation = %v, want failed policy_denied, refusal lineage_unreadable", st)
		}
		if n := len(e.LLM.Requests()); n != 1 {
			t.Errorf("model calls = %d, want 1 (the first turn only)", n)
		}
		if l := lineage(t, erika, id); l != nil {
			t.Errorf("the refused run stored a lineage: %v", l)
		}
		third := continueRun(t, erika, 1, first)
		if third["status"] != "completed" || third["holdsProcess"] != true || third["processSkill"] != "seo" {
			t.Fatalf("the next turn = %v, want it to continue the process", third)
		}
	})
}

// L4.10, LC7: a queued continuation whose lineage cannot be stored is
// requeued, keeping the process — the next pickup continues it; past the
// requeue budget it is dead-lettered retries_exhausted.
func TestL4_10_QueuedContinuationRetriesAStoreErrorAndKeepsTheProcess(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("one"), answer("two"))
		erika := e.As(wt.Erika)
		ctx := context.Background()
		first := invoke(t, erika, 1, nil)["uuid"].(string)
		queued := func() string {
			return erika.Must("POST", "/api/runs", map[string]any{"configuration": 1, "predecessorRunUuid": first, "queued": true,
				"messages": []map[string]string{{"role": "user", "content": "weiter"}}}, 201).Map(t)["uuid"].(string)
		}
		lift := failLineageWrites(t, db)
		id := queued()
		if err := e.App.Runtime.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		st := erika.Must("GET", "/api/runs/"+id, nil, 200).Map(t)
		if st["status"] != "queued" || st["requeueCount"] != float64(1) {
			t.Fatalf("after a pickup that could not store the lineage: %v, want queued again, requeueCount 1", st)
		}
		lift()
		if err := e.App.Runtime.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		st = erika.Must("GET", "/api/runs/"+id, nil, 200).Map(t)
		if st["status"] != "completed" || st["holdsProcess"] != true || st["processSkill"] != "seo" {
			t.Fatalf("after the retry: %v, want completed, holding the process", st)
		}
		if l := lineage(t, erika, id); l == nil || l["origin"] != first || l["pin"] == nil {
			t.Errorf("lineage after the retry = %v, want the process carried from %s", l, first)
		}

		// A store error that outlasts the budget dead-letters the run.
		lift = failLineageWrites(t, db)
		defer lift()
		id = queued()
		for i := 0; i < 10; i++ {
			if err := e.App.Runtime.RunQueued(ctx, id); err != nil {
				t.Fatal(err)
			}
			if st = erika.Must("GET", "/api/runs/"+id, nil, 200).Map(t); st["status"] != "queued" {
				break
			}
		}
		if st["status"] != "failed" || st["terminationReason"] != "retries_exhausted" {
			t.Fatalf("after the budget: %v, want failed retries_exhausted", st)
		}
		if n := len(e.LLM.Requests()); n != 2 {
			t.Errorf("model calls = %d, want 2 (the first turn and the retried one)", n)
		}
	})
}
