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
		first := startSEO(t, erika, 1)
		second := continued(t, erika, 1, first.UUID, false)
		if second.Status != "waiting_for_approval" || !second.HoldsProcessIs(true) {
			t.Fatalf("second = %+v", second)
		}
		id := second.UUID
		for _, other := range []string{wt.Paula, wt.Otto, wt.Robot} {
			if r := e.As(other).Do("POST", "/api/runs/"+id+"/end-process", nil); r.Status != 404 {
				t.Errorf("end-process by another user = %d %s", r.Status, r.Body)
			}
		}
		if r := erika.Do("POST", "/api/runs/00000000-0000-4000-8000-000000000000/end-process", nil); r.Status != 404 {
			t.Errorf("end-process of an unknown run = %d", r.Status)
		}
		got, r := erika.EndProcess(id)
		if r.Status != 200 || !got.Ended || got.Status != "cancelled" {
			t.Fatalf("end-process = %d %+v", r.Status, got)
		}
		for _, run := range []string{first.UUID, id} {
			if st := erika.MustRun(run); !st.HoldsProcessIs(false) {
				t.Errorf("run %s still holds the process: %v", run, st.HoldsProcess)
			}
		}
		third := continued(t, erika, 1, id, false)
		if third.Status != "completed" || !third.HoldsProcessIs(false) {
			t.Fatalf("the turn after the end = %+v", third)
		}
	})
}

// L7.6: a turn that waits when its process is ended elsewhere does not resume: process_ended.
func TestL7_6_WaitingTurnOfAnEndedProcessIsRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(call("c1", "update_page_metadata", `{"page": 1, "fields": {"description": "new"}}`))
		erika := e.As(wt.Erika)
		first := startSEO(t, erika, 1)
		id := first.UUID
		// The origin (this run) is released as an administrator ends it from a parallel turn's view.
		exec(t, db, `INSERT INTO run_events (run_uuid, sequence, kind, payload, created_at)
			SELECT uuid, event_sequence + 1, 'lineage', ?, 0 FROM runs WHERE uuid = ?`,
			`{"configuration":1,"pin":null,"subject":null,"processSkill":"seo","origin":"`+id+`","released":true,"predecessor":"","carriedFrom":""}`, id)
		exec(t, db, `UPDATE runs SET event_sequence = event_sequence + 1 WHERE uuid = ?`, id)
		if first.Pending == nil {
			t.Fatalf("no pending decision: %+v", first)
		}
		_, r := erika.Decide(id, wt.Approve{Approve: true, TurnDigest: first.Pending.TurnDigest})
		if r.Status != 409 || r.ErrorCode() != "process_ended" {
			t.Fatalf("resume of an ended process = %d %s", r.Status, r.Body)
		}
		st := erika.MustRun(id)
		if st.Status != "failed" || st.TerminationReason != "process_ended" {
			t.Fatalf("run = %+v", st)
		}
	})
}

// appendLineage appends payload as the run's latest lineage event, as a
// store that was written by hand or damaged would hold it.
func appendLineage(t *testing.T, db *store.DB, id, payload string) {
	t.Helper()
	exec(t, db, `INSERT INTO run_events (run_uuid, sequence, kind, payload, created_at)
		SELECT uuid, event_sequence + 1, 'lineage', ?, 0 FROM runs WHERE uuid = ?`, payload, id)
	exec(t, db, `UPDATE runs SET event_sequence = event_sequence + 1 WHERE uuid = ?`, id)
}

// L7.13, L7.9, L7.12: a lineage that cannot be read leaves holdsProcess null
// in every shape of unreadable — of the run itself or of its origin — and
// end-process on such a run answers 409 lineage_unreadable, never 500; the
// status still names the predecessor.
func TestL7_13_UnreadableLineageAnswersNullAndEndProcessConflicts(t *testing.T) {
	good := func(origin string) string {
		return `{"configuration":1,"pin":{"skill":12,"source":2,"digest":"v1:x"},"subject":null,"processSkill":"seo","origin":"` +
			origin + `","released":false,"predecessor":"","carriedFrom":""}`
	}
	shapes := map[string]func(origin string) string{
		"not JSON":        func(string) string { return `not json` },
		"truncated":       func(string) string { return `{"configuration":1,"pin":` },
		"an array":        func(string) string { return `[]` },
		"null":            func(string) string { return `null` },
		"a string":        func(string) string { return `"lineage"` },
		"an empty object": func(string) string { return `{}` },
		"a wrongly typed pin": func(o string) string {
			return `{"configuration":1,"pin":"yes","subject":null,"processSkill":"seo","origin":"` + o + `","released":false}`
		},
		"a pin without skill or digest": func(o string) string {
			return `{"configuration":1,"pin":{},"subject":null,"processSkill":"seo","origin":"` + o + `","released":false}`
		},
		"a pin without origin": func(string) string {
			return `{"configuration":1,"pin":{"skill":12,"source":2,"digest":"v1:x"},"processSkill":"seo","origin":"","released":false}`
		},
		"a wrongly typed flag": func(o string) string {
			return `{"configuration":1,"pin":{"skill":12,"source":2,"digest":"v1:x"},"processSkill":"seo","origin":"` + o + `","released":"no"}`
		},
		"an unknown field": func(o string) string { return good(o)[:len(good(o))-1] + `,"extra":1}` },
		"trailing data":    func(o string) string { return good(o) + ` {}` },
	}
	for name, shape := range shapes {
		for _, of := range []string{"the run", "its origin"} {
			t.Run(name+" of "+of, func(t *testing.T) {
				storetest.Each(t, func(t *testing.T, db *store.DB) {
					e := newEnv(t, db, nil)
					e.LLM.Add(answer("one"), answer("two"))
					erika := e.As(wt.Erika)
					first := startSEO(t, erika, 1).UUID
					second := continued(t, erika, 1, first, false).UUID
					damaged := second
					if of == "its origin" {
						damaged = first
					}
					appendLineage(t, db, damaged, shape(first))
					r := erika.Must("GET", "/api/runs/"+second, nil, 200)
					st := wt.Decode[wt.RunStatus](t, r)
					// Present and null, not absent: the raw field tells them apart.
					if raw := wt.Decode[wt.RunNulls](t, r); !raw.HoldsProcessNull() {
						t.Errorf("holdsProcess = %s (present %v), want null", raw.HoldsProcess, raw.HoldsProcess != nil)
					}
					if st.PredecessorRunUUID != first {
						t.Errorf("predecessorRunUuid = %v, want %s", st.PredecessorRunUUID, first)
					}
					r = erika.Do("POST", "/api/runs/"+second+"/end-process", nil)
					if r.Status != 409 || r.ErrorCode() != "lineage_unreadable" {
						t.Errorf("end-process = %d %s, want 409 lineage_unreadable", r.Status, r.Body)
					}
					if st := erika.MustRun(second); st.Status != "completed" {
						t.Errorf("after the refused end-process: %+v, want the run unchanged", st)
					}
					// The event stream still answers: an unreadable payload reads null.
					for _, id := range []string{first, second} {
						evs := wt.Decode[wt.Events](t, erika.Must("GET", "/api/runs/"+id+"/events?after=0", nil, 200)).Events
						if len(evs) == 0 {
							t.Errorf("events of %s = none", id)
						}
					}
				})
			})
		}
	}
}

// L1.1, L7.13: the run status shows predecessorRunUuid whenever the request
// named one, lineage or not, at every privacy level: a turn whose
// predecessor is gone, a refused continuation of a turn without a process,
// and a queued continuation not yet picked up.
func TestL7_13_StatusShowsThePredecessorWheneverTheRequestNamedOne(t *testing.T) {
	for _, level := range []string{"none", "metadata"} {
		t.Run(level, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db, nil)
				exec(t, db, `UPDATE configurations SET privacy = ? WHERE uid = 1`, level)
				e.LLM.Add(answer("plain"), answer("gone"))
				erika := e.As(wt.Erika)
				plain := started(t, erika, wt.StartRun{Configuration: 1,
					Messages: []wt.Message{{Role: "user", Content: "hallo"}}}).UUID
				unknown := "00000000-0000-4000-8000-000000000000"
				runs := map[string]string{
					continued(t, erika, 1, unknown, false).UUID: unknown,
					started(t, erika, wt.StartRun{Configuration: 1, PredecessorRunUUID: plain,
						Invocation: &wt.Invocation{Skill: 13},
						Messages:   []wt.Message{{Role: "user", Content: "go"}}}).UUID: plain,
					continued(t, erika, 1, plain, true).UUID: plain,
				}
				for id, pred := range runs {
					st := erika.MustRun(id)
					if st.PredecessorRunUUID != pred {
						t.Errorf("run %s (%s, refusal %v) predecessorRunUuid = %v, want %s", id, st.Status, st.Refusal, st.PredecessorRunUUID, pred)
					}
				}
			})
		})
	}
}
