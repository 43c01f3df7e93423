package adr228_test

import (
	"context"
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
		first := startSEO(t, erika, 1)
		id := first.UUID
		l := lineage(t, erika, id)
		if l == nil || l.Configuration != 1 || l.Pin == nil || l.Pin.Skill != 12 || l.ProcessSkill != "seo" || l.Origin != id ||
			l.Released {
			t.Fatalf("lineage of the start = %+v", l)
		}
		next := continued(t, erika, 1, id, false)
		nl := lineage(t, erika, next.UUID)
		if nl == nil || nl.Origin != id || nl.Predecessor != id || nl.Pin == nil {
			t.Fatalf("lineage of the continuation = %+v", nl)
		}
		if !next.HoldsProcessIs(true) || next.ProcessSkill != "seo" {
			t.Fatalf("continuation status = %+v", next)
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
		foreign := startSEO(t, e.As(wt.Paula), 1).UUID
		erika := e.As(wt.Erika)
		for _, pred := range []string{"00000000-0000-4000-8000-000000000000", foreign} {
			st := continued(t, erika, 1, pred, false)
			if st.Status != "completed" || !st.HoldsProcessIs(false) || len(st.Notices) != 1 {
				t.Fatalf("continuation of %s = %+v", pred, st)
			}
			if notice := st.Notices[0]; notice.Kind != "dropped_source" || notice.Reason != "predecessor_gone" || notice.UID != 0 {
				t.Errorf("notice = %+v", notice)
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
		first := startSEO(t, erika, 1)
		if first.Status != "waiting_for_approval" {
			t.Fatalf("first = %+v", first)
		}
		next := continued(t, erika, 1, first.UUID, false)
		if next.Status != "failed" || next.Refusal != "predecessor_not_finished" {
			t.Fatalf("continuation of a waiting process turn = %+v", next)
		}
	})
}

// L4.9, L4.11, L2.1: a continuation naming a queued turn whose request carries
// an invocation or a predecessor is refused predecessor_not_finished — that
// turn's process is decided only at its pickup — and never runs as an
// ordinary turn that drops the process. The refusal keeps the process: once
// the queued turn ran, a turn continued from the refused one holds it. A
// queued ordinary turn hands on nothing and is continued at once.
func TestL4_9_ContinuationOfAQueuedProcessTurnIsNotFinished(t *testing.T) {
	cases := []struct {
		name  string
		queue func(t *testing.T, c *wt.Client) string
	}{
		{"queued invocation", func(t *testing.T, c *wt.Client) string {
			return startSEOQueued(t, c, 1).UUID
		}},
		{"queued continuation", func(t *testing.T, c *wt.Client) string {
			first := startSEO(t, c, 1).UUID
			return continued(t, c, 1, first, true).UUID
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db, nil)
				e.LLM.Add(answer("one"), answer("queued turn"), answer("after"))
				erika := e.As(wt.Erika)
				queued := tc.queue(t, erika)
				calls := len(e.LLM.Requests())
				refused := continued(t, erika, 1, queued, false)
				if refused.Status != "failed" || refused.TerminationReason != "policy_denied" ||
					refused.Refusal != "predecessor_not_finished" {
					t.Fatalf("continuation of a queued process turn = %+v, want refused predecessor_not_finished", refused)
				}
				if n := len(e.LLM.Requests()); n != calls {
					t.Fatalf("the refused continuation called the model (%d calls, want %d)", n, calls)
				}
				if err := e.App.Runtime.RunQueued(context.Background(), queued); err != nil {
					t.Fatal(err)
				}
				if st := erika.MustRun(queued); st.Status != "completed" || !st.HoldsProcessIs(true) {
					t.Fatalf("the queued turn after pickup = %+v", st)
				}
				next := continued(t, erika, 1, refused.UUID, false)
				if next.Status != "completed" || !next.HoldsProcessIs(true) || next.ProcessSkill != "seo" {
					t.Fatalf("the turn continued from the refused one = %+v, want it to hold the process", next)
				}
			})
		})
	}
	t.Run("queued ordinary turn", func(t *testing.T) {
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			e := newEnv(t, db, nil)
			e.LLM.Add(answer("next"))
			erika := e.As(wt.Erika)
			queued := started(t, erika, wt.StartRun{Configuration: 1, Queued: true,
				Messages: []wt.Message{{Role: "user", Content: "hallo"}}}).UUID
			if next := continued(t, erika, 1, queued, false); next.Status != "completed" || !next.HoldsProcessIs(false) {
				t.Fatalf("continuation of a queued ordinary turn = %+v, want it to go on", next)
			}
		})
	})
}

// L4.2, L2.5, L4.6: refusals, dropped-source notices and the lineage hold
// codes and uids only, so they survive every privacy level: at privacy none
// too, the status of a refused run shows its refusal, the status of a turn
// whose predecessor is gone shows the predecessor_gone notice, and a
// continuation holds the process.
func TestL4_2_RefusalsNoticesAndLineageSurviveEveryPrivacyLevel(t *testing.T) {
	for _, level := range []string{"none", "metadata", "redacted", "full"} {
		t.Run(level, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db, nil)
				exec(t, db, `UPDATE configurations SET privacy = ? WHERE uid = 1`, level)
				e.LLM.Add(answer("one"), answer("two"), answer("gone"))
				erika := e.As(wt.Erika)

				refused := started(t, erika, wt.StartRun{Configuration: 1, Invocation: &wt.Invocation{Skill: 13},
					Messages: []wt.Message{{Role: "user", Content: "go"}}})
				again := erika.MustRun(refused.UUID)
				if again.Status != "failed" || again.Refusal != "not_a_process" {
					t.Errorf("refused run as read back = %+v, want refusal not_a_process", again)
				}

				first := startSEO(t, erika, 1).UUID
				next := continued(t, erika, 1, first, false)
				if !next.HoldsProcessIs(true) || next.ProcessSkill != "seo" {
					t.Errorf("continuation = %+v, want it to hold the process", next)
				}

				gone := continued(t, erika, 1, "00000000-0000-4000-8000-000000000000", false)
				st := erika.MustRun(gone.UUID)
				if n := st.Notices; len(n) != 1 || n[0].Reason != "predecessor_gone" || n[0].UID != 0 {
					t.Errorf("notices of a turn whose predecessor is gone = %+v, want predecessor_gone uid 0", st.Notices)
				}
			})
		})
	}
}

// ADR-228 items 2 and 4 (regression): a process turn waiting for a card
// whose configuration turned four-eyes on since is refused at resume
// (approval_denied) — and a refusal does not end the process. The refused
// run still holds it (holdsProcess: true), so the next turn continuing from
// it agrees: on the four-eyes configuration it is refused approval_denied as
// a continued process, and once four-eyes is off again it carries the
// process on. (It completed without the process, holdsProcess false and no
// notice, on the four-eyes configuration and after it was turned off.)
func TestARefusedResumeKeepsItsProcessForTheNextTurn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(call("c1", "update_page_metadata", `{"page": 1, "fields": {"description": "four-eyes"}}`))
		erika := e.As(wt.Erika)
		first := startSEO(t, erika, 1)
		if first.Status != "waiting_for_approval" || !first.HoldsProcessIs(true) {
			t.Fatalf("first = %+v", first)
		}
		exec(t, db, `UPDATE configurations SET require_second_approver = TRUE WHERE uid = 1`)
		r := erika.Do("POST", "/api/runs/"+first.UUID+"/approval", map[string]any{"turnDigest": digest(t, first), "approve": false, "reason": "skip"})
		if r.Status != 409 || r.ErrorCode() != "approval_denied" {
			t.Fatalf("decision = %d %s, want 409 approval_denied", r.Status, r.Body)
		}
		refused := erika.MustRun(first.UUID)
		if refused.TerminationReason != "approval_denied" || !refused.HoldsProcessIs(true) {
			t.Fatalf("refused run = %+v, want approval_denied still holding its process", refused)
		}
		// On the four-eyes configuration the continuation is a continued
		// process: refused approval_denied, not run without it.
		next := continued(t, erika, 1, first.UUID, false)
		if next.Status != "failed" || next.TerminationReason != "approval_denied" || next.Refusal != "second_approver_required" {
			t.Fatalf("continuation on the four-eyes configuration = %+v, want failed approval_denied", next)
		}
		// Four-eyes off again: the process goes on from the refused runs.
		exec(t, db, `UPDATE configurations SET require_second_approver = FALSE WHERE uid = 1`)
		e.LLM.Add(answer("weiter"))
		after := continued(t, erika, 1, next.UUID, false)
		if after.Status != "completed" || !after.HoldsProcessIs(true) || after.ProcessSkill == "" || len(after.Notices) != 0 {
			t.Fatalf("continuation after four-eyes was turned off = %+v, want completed holding the process", after)
		}
		if l := lineage(t, erika, after.UUID); l == nil || l.Origin != first.UUID {
			t.Errorf("lineage of the continuation = %+v, want the process that started at %s", l, first.UUID)
		}
	})
}
