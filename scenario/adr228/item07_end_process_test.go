package adr228_test

import (
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L7.1, L7.2, L7.4, L7.5, L7.13: ending a waiting turn cancels it through the
// guarded transition; from then on no turn of the lineage holds the process;
// anyone but the initiator or an administrator learns nothing.
func TestL7_EndProcessCancelsTheWaitingTurnAndReleasesTheLineage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("one"), call("c1", "update_page_metadata", `{"page": 1, "fields": {"description": "new"}}`), answer("after"))
		erika := e.As(wt.Erika)
		first := invoke(t, erika, 1, nil)
		second := continueRun(t, erika, 1, first["uuid"].(string))
		if second["status"] != "waiting_for_approval" || second["holdsProcess"] != true {
			t.Fatalf("second = %v", second)
		}
		id := second["uuid"].(string)
		for _, other := range []string{wt.Paula, wt.Otto, wt.Robot} {
			if r := e.As(other).Do("POST", "/api/runs/"+id+"/end-process", nil); r.Status != 404 {
				t.Errorf("end-process by another user = %d %s", r.Status, r.Body)
			}
		}
		if r := erika.Do("POST", "/api/runs/00000000-0000-4000-8000-000000000000/end-process", nil); r.Status != 404 {
			t.Errorf("end-process of an unknown run = %d", r.Status)
		}
		got := erika.Must("POST", "/api/runs/"+id+"/end-process", nil, 200).Map(t)
		if got["ended"] != true || got["status"] != "cancelled" {
			t.Fatalf("end-process = %v", got)
		}
		for _, run := range []string{first["uuid"].(string), id} {
			if st := erika.Must("GET", "/api/runs/"+run, nil, 200).Map(t); st["holdsProcess"] != false {
				t.Errorf("run %s still holds the process: %v", run, st["holdsProcess"])
			}
		}
		third := continueRun(t, erika, 1, id)
		if third["status"] != "completed" || third["holdsProcess"] != false {
			t.Fatalf("the turn after the end = %v", third)
		}
	})
}

// L7.6: a turn that waits when its process is ended elsewhere does not resume: process_ended.
func TestL7_6_WaitingTurnOfAnEndedProcessIsRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(call("c1", "update_page_metadata", `{"page": 1, "fields": {"description": "new"}}`))
		erika := e.As(wt.Erika)
		first := invoke(t, erika, 1, nil)
		id := first["uuid"].(string)
		// The origin (this run) is released as an administrator ends it from a parallel turn's view.
		exec(t, db, `INSERT INTO run_events (run_uuid, sequence, kind, payload, created_at)
			SELECT uuid, event_sequence + 1, 'lineage', ?, 0 FROM runs WHERE uuid = ?`,
			`{"configuration":1,"pin":null,"subject":null,"processSkill":"seo","origin":"`+id+`","released":true,"predecessor":"","carriedFrom":""}`, id)
		exec(t, db, `UPDATE runs SET event_sequence = event_sequence + 1 WHERE uuid = ?`, id)
		r := erika.Do("POST", "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": digest(t, first)})
		if r.Status != 409 || r.ErrorCode() != "process_ended" {
			t.Fatalf("resume of an ended process = %d %s", r.Status, r.Body)
		}
		st := erika.Must("GET", "/api/runs/"+id, nil, 200).Map(t)
		if st["status"] != "failed" || st["terminationReason"] != "process_ended" {
			t.Fatalf("run = %v", st)
		}
	})
}
