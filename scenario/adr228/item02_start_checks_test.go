package adr228_test

import (
	"context"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L2.5: a refusal is a failed run with its case and policy_denied; the model is never called.
func TestL2_5_RefusedInvocationIsAFailedRunWithItsCase(t *testing.T) {
	cases := []struct {
		name    string
		token   string
		cfg     int64
		skill   int64
		subject *wt.Subject
		want    string
	}{
		{"plain skill", wt.Erika, 1, 13, nil, "not_a_process"},
		{"service account", wt.Robot, 1, seoSkill, nil, "service_account"},
		{"four-eyes configuration", wt.Erika, 2, seoSkill, nil, "second_approver_required"},
		{"unknown skill", wt.Erika, 1, 999, nil, "skill_unavailable"},
		{"unusable configuration", wt.Erika, 99, seoSkill, nil, "configuration_denied"},
		{"deleted subject", wt.Erika, 1, seoSkill, &wt.Subject{Table: "pages", UID: 404}, "subject_denied"},
		{"root-level record for an editor", wt.Erika, 1, seoSkill, &wt.Subject{Table: "tt_content", UID: 777}, "subject_denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db, nil)
				exec(t, db, `INSERT INTO records (tbl, uid, pid, fields) VALUES ('tt_content', 777, 0, '{}')`)
				st := started(t, e.As(c.token), wt.StartRun{Configuration: c.cfg, Invocation: &wt.Invocation{Skill: c.skill, Subject: c.subject},
					Messages: []wt.Message{{Role: "user", Content: "go"}}})
				if st.Status != "failed" || st.TerminationReason != "policy_denied" || st.Refusal != c.want ||
					st.ErrorClass != "process_invocation_refused" {
					t.Fatalf("run = %+v, want refusal %s", st, c.want)
				}
				if n := len(e.LLM.Requests()); n != 0 {
					t.Errorf("the model was called")
				}
			})
		})
	}
}

// L2.1, L2.3, L2.7: a queued run is checked at pickup, as the user is then:
// a user demoted between enqueue and pickup is refused, settled outside the queue's recovery.
func TestL2_1_L2_3_L2_7_DemotionBetweenEnqueueAndPickupRefuses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		erika := e.As(wt.Erika)
		id := startSEOQueued(t, erika, 1).UUID
		exec(t, db, `UPDATE be_users SET group_uids = '[]' WHERE uid = 2`)
		if err := e.App.Runtime.RunQueued(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		got := e.As(wt.Admin).MustRun(id)
		if got.Status != "failed" || got.Refusal != "configuration_denied" || got.RequeueCount != 0 {
			t.Fatalf("run = %+v", got)
		}
		if rep, err := e.App.Runtime.Reap(context.Background()); err != nil || rep.Requeued+rep.DeadLettered != 0 {
			t.Errorf("the refusal reached the queue's recovery: %+v %v", rep, err)
		}
	})
}

// L2.6: a continued process on a configuration that turned four-eyes on since is approval_denied.
func TestL2_6_FourEyesTurnedOnSinceDeniesTheContinuation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("first turn"))
		erika := e.As(wt.Erika)
		first := startSEO(t, erika, 1)
		exec(t, db, `UPDATE configurations SET require_second_approver = TRUE WHERE uid = 1`)
		next := continued(t, erika, 1, first.UUID, false)
		if next.Status != "failed" || next.TerminationReason != "approval_denied" || next.Refusal != "second_approver_required" {
			t.Fatalf("continuation = %+v", next)
		}
	})
}

// L2.6 at resume: a process turn waiting for approval whose configuration
// turned four-eyes on since is settled failed approval_denied when it is
// answered — by a second approver's release as much as by the initiator's
// skip — not released and continued: nothing is written and the model is
// not asked again.
func TestL2_6_FourEyesTurnedOnSinceDeniesTheWaitingProcessTurnAtResume(t *testing.T) {
	for _, c := range []struct {
		name, who string
		decision  map[string]any
	}{
		{"second approver releases", wt.Paula, map[string]any{"approve": true}},
		{"initiator skips", wt.Erika, map[string]any{"approve": false, "reason": "skip"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db, nil)
				e.LLM.Add(call("c1", "update_page_metadata", `{"page": 1, "fields": {"description": "four-eyes"}}`), answer("done"))
				erika := e.As(wt.Erika)
				first := startSEO(t, erika, 1)
				if first.Status != "waiting_for_approval" {
					t.Fatalf("first = %+v", first)
				}
				exec(t, db, `UPDATE configurations SET require_second_approver = TRUE WHERE uid = 1`)
				c.decision["turnDigest"] = digest(t, first)
				r := e.As(c.who).Do("POST", "/api/runs/"+first.UUID+"/approval", c.decision)
				if r.Status != 409 || r.ErrorCode() != "approval_denied" {
					t.Fatalf("decision = %d %s, want 409 approval_denied", r.Status, r.Body)
				}
				got := e.As(wt.Admin).MustRun(first.UUID)
				if got.Status != "failed" || got.TerminationReason != "approval_denied" || got.Refusal != "second_approver_required" {
					t.Fatalf("run = %+v, want failed approval_denied (second_approver_required)", got)
				}
				if n := len(e.LLM.Requests()); n != 1 {
					t.Errorf("model calls = %d, want 1: the turn was continued", n)
				}
				var fields string
				if err := db.QueryRow(t.Context(), `SELECT fields FROM records WHERE tbl = 'pages' AND uid = 1`).Scan(&fields); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(fields, "four-eyes") {
					t.Errorf("page fields %s: the write ran", fields)
				}
				// A second answer finds nothing waiting (the approver no longer sees the run) and changes nothing.
				if r := e.As(c.who).Do("POST", "/api/runs/"+first.UUID+"/approval", c.decision); r.Status != 409 && r.Status != 404 {
					t.Errorf("second decision = %d %s, want 409 not_waiting or 404", r.Status, r.Body)
				}
				if again := e.As(wt.Admin).MustRun(first.UUID); again.TerminationReason != "approval_denied" || len(e.LLM.Requests()) != 1 {
					t.Errorf("after a second decision: %+v", again)
				}
			})
		})
	}
}
