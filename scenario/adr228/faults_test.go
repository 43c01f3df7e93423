package adr228_test

import (
	"context"
	"strings"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"

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
		id := startSEO(t, erika, 1).UUID
		lift := failLineageWrites(t, db)
		if r := erika.Do("POST", "/api/runs/"+id+"/end-process", nil); r.Status != 500 {
			t.Fatalf("end-process while the lineage cannot be stored = %d %s, want 500", r.Status, r.Body)
		}
		if st := erika.MustRun(id); !st.HoldsProcessIs(true) || st.Status != "completed" {
			t.Fatalf("after the failed release: %+v, want the run completed and still holding", st)
		}
		lift()
		got := wt.Decode[wt.Ended](t, erika.Must("POST", "/api/runs/"+id+"/end-process", nil, 200))
		if !got.Ended || got.Status != "completed" {
			t.Fatalf("retried end-process = %+v", got)
		}
		if st := erika.MustRun(id); !st.HoldsProcessIs(false) {
			t.Fatalf("after the retry: holdsProcess %v, want false", st.HoldsProcess)
		}
		if l := lineage(t, erika, id); l == nil || !l.Released {
			t.Errorf("latest lineage = %+v, want released", l)
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
		first := startSEO(t, erika, 1).UUID
		lift := failLineageWrites(t, db)
		second := continued(t, erika, 1, first, false)
		lift()
		id := second.UUID
		st := erika.MustRun(id)
		if st.Status != "failed" || st.TerminationReason != "policy_denied" ||
			st.ErrorClass != "process_invocation_refused" || st.Refusal != "lineage_unreadable" {
			t.Fatalf("continuation = %+v, want failed policy_denied, refusal lineage_unreadable", st)
		}
		if n := len(e.LLM.Requests()); n != 1 {
			t.Errorf("model calls = %d, want 1 (the first turn only)", n)
		}
		if l := lineage(t, erika, id); l != nil {
			t.Errorf("the refused run stored a lineage: %+v", l)
		}
		third := continued(t, erika, 1, first, false)
		if third.Status != "completed" || !third.HoldsProcessIs(true) || third.ProcessSkill != "seo" {
			t.Fatalf("the next turn = %+v, want it to continue the process", third)
		}
	})
}

// L4.4 ("a refusal does not end the process"): the next turn that names a
// continuation refused because its lineage could not be stored — it has no
// lineage to name where the process went — continues the process through
// the run that continuation named; it used to go on without it, silently.
func TestL4_4_ContinuationWhoseLineageCannotBeStoredKeepsTheProcessForTheNextTurn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("one"), answer("three"))
		erika := e.As(wt.Erika)
		first := startSEO(t, erika, 1).UUID
		lift := failLineageWrites(t, db)
		second := continued(t, erika, 1, first, false)
		lift()
		if second.Status != "failed" || second.Refusal != "lineage_unreadable" {
			t.Fatalf("continuation while the lineage cannot be stored = %+v, want refused lineage_unreadable", second)
		}
		third := continued(t, erika, 1, second.UUID, false)
		if third.Status != "completed" || !third.HoldsProcessIs(true) || third.ProcessSkill != "seo" {
			t.Fatalf("the turn after the refused one = %+v, want it to continue the process", third)
		}
		if l := lineage(t, erika, third.UUID); l == nil || l.Origin != first || l.Pin == nil {
			t.Errorf("lineage of the next turn = %+v, want the process carried from %s", l, first)
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
		first := startSEO(t, erika, 1).UUID
		queued := func() string {
			return continued(t, erika, 1, first, true).UUID
		}
		lift := failLineageWrites(t, db)
		id := queued()
		if err := e.App.Runtime.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		st := erika.MustRun(id)
		if st.Status != "queued" || st.RequeueCount != 1 {
			t.Fatalf("after a pickup that could not store the lineage: %+v, want queued again, requeueCount 1", st)
		}
		lift()
		if err := e.App.Runtime.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		st = erika.MustRun(id)
		if st.Status != "completed" || !st.HoldsProcessIs(true) || st.ProcessSkill != "seo" {
			t.Fatalf("after the retry: %+v, want completed, holding the process", st)
		}
		if l := lineage(t, erika, id); l == nil || l.Origin != first || l.Pin == nil {
			t.Errorf("lineage after the retry = %+v, want the process carried from %s", l, first)
		}

		// A store error that outlasts the budget dead-letters the run.
		lift = failLineageWrites(t, db)
		defer lift()
		id = queued()
		for i := 0; i < 10; i++ {
			if err := e.App.Runtime.RunQueued(ctx, id); err != nil {
				t.Fatal(err)
			}
			if st = erika.MustRun(id); st.Status != "queued" {
				break
			}
		}
		if st.Status != "failed" || st.TerminationReason != "retries_exhausted" {
			t.Fatalf("after the budget: %+v, want failed retries_exhausted", st)
		}
		if n := len(e.LLM.Requests()); n != 2 {
			t.Errorf("model calls = %d, want 2 (the first turn and the retried one)", n)
		}
	})
}

// toolNames lists the tools a model request offered.
func toolNames(req llmtest.RecordedRequest) []string {
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// LC5: a resumed turn whose process approval cannot be read (its row no
// longer decodes) goes on without the process's declared tools, bounded by
// the run's stored list: a tool the live allow-list gained meanwhile is not
// offered either. The first release answers as LC5 says — the turn goes on,
// the pending write, whose tool the turn no longer offers, is answered with
// an error result and nothing is written — not 409 preview_changed.
func TestLC5_FirstReleaseWithUnreadableProcessApprovalGoesOnWithoutItsToolsNotPreviewChanged(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(call("c1", "update_page_metadata", `{"page": 1, "fields": {"description": "new"}}`), answer("done"))
		erika := e.As(wt.Erika)
		// The configuration's other skill declares two tools: the allow-list is that plus the process's.
		exec(t, db, `UPDATE skill_approvals SET allowed_tools = '["read_page","set_progress"]' WHERE skill_uid = 13`)
		first := startSEO(t, erika, 1)
		id := first.UUID
		if first.Status != "waiting_for_approval" {
			t.Fatalf("first = %+v", first)
		}
		start := strings.Join(toolNames(e.LLM.Requests()[0]), ",")
		for _, want := range []string{"read_page", "update_page_metadata", "set_progress", "highlight_record"} {
			if !strings.Contains(start, want) {
				t.Fatalf("start offered %s, want %s among them", start, want)
			}
		}
		if strings.Contains(start, "read_record") {
			t.Fatalf("start offered %s, want no read_record", start)
		}
		// While the card waits: the process approval stops decoding, and the
		// other skill's declaration gains read_record.
		exec(t, db, `UPDATE skill_approvals SET allowed_tools = 'not json' WHERE skill_uid = 12`)
		exec(t, db, `UPDATE skill_approvals SET allowed_tools = '["read_page","set_progress","read_record"]' WHERE skill_uid = 13`)

		done := wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs/"+id+"/approval", wt.Approve{Approve: true, TurnDigest: digest(t, first)}, 200))
		if done.Status != "completed" {
			t.Fatalf("first release = %+v, want the turn to go on and complete", done)
		}
		var result string
		for _, m := range e.LLM.Requests()[1].Messages {
			if m.Role == llm.RoleTool && m.ToolCallID == "c1" {
				result = m.Content
			}
		}
		if !strings.Contains(result, "unknown tool update_page_metadata") {
			t.Errorf("the pending call's result = %q, want unknown tool", result)
		}
		var fields string
		if err := db.QueryRow(context.Background(), `SELECT fields FROM records WHERE tbl = 'pages' AND uid = 1`).Scan(&fields); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(fields, `"new"`) {
			t.Fatalf("page fields %s: the write ran without its tool being offered", fields)
		}
		resumed := strings.Join(toolNames(e.LLM.Requests()[1]), ",")
		for _, gone := range []string{"update_page_metadata", "highlight_record", "read_record"} {
			if strings.Contains(resumed, gone) {
				t.Errorf("resumed turn offered %s, want no %s", resumed, gone)
			}
		}
		for _, kept := range []string{"read_page", "set_progress"} {
			if !strings.Contains(resumed, kept) {
				t.Errorf("resumed turn offered %s, want %s", resumed, kept)
			}
		}
	})
}

// LC7, L4.10: a fault a retry cannot fix inside the guarded reads of a
// queued continuation's preparation (the process approval no longer
// decodes) is retried — each pickup requeues the run, keeping its process —
// until the requeue budget is spent, then the run is dead-lettered
// retries_exhausted; the model is never asked.
func TestLC7_UnfixableFaultInAGuardedReadIsRetriedThenDeadLettered(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("one"))
		erika := e.As(wt.Erika)
		first := startSEO(t, erika, 1).UUID
		id := continued(t, erika, 1, first, true).UUID
		exec(t, db, `UPDATE skill_approvals SET allowed_tools = 'not json' WHERE skill_uid = 12`)
		var st wt.RunStatus
		pickups := 0
		for pickups < 10 {
			pickups++
			if err := e.App.Runtime.RunQueued(context.Background(), id); err != nil {
				t.Fatal(err)
			}
			st = erika.MustRun(id)
			if st.Status != "queued" {
				break
			}
			if st.RequeueCount != pickups {
				t.Fatalf("after pickup %d: %+v, want requeueCount %d", pickups, st, pickups)
			}
		}
		if st.Status != "failed" || st.TerminationReason != "retries_exhausted" || st.ErrorClass != "process_preparation" {
			t.Fatalf("after %d pickups: %+v, want failed retries_exhausted (process_preparation)", pickups, st)
		}
		if pickups < 2 {
			t.Errorf("dead-lettered at the first pickup, want retries first")
		}
		if n := len(e.LLM.Requests()); n != 1 {
			t.Errorf("model calls = %d, want 1 (the first turn only)", n)
		}
	})
}
