package adr228_test

import (
	"context"
	"strings"
	"testing"

	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L6.1, L6.2, L6.3: the process is composed from its approval snapshot and its
// declared tools join the allow-list; a continued tour keeps its approved text
// and tools after the record was edited.
func TestL6_1_L6_2_L6_3_ContinuationKeepsTheApprovedSnapshot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("one"), answer("two"))
		erika := e.As(wt.Erika)
		first := startSEO(t, erika, 1)
		k, err := e.App.Skills.Get(ctx, seoSkill)
		if err != nil {
			t.Fatal(err)
		}
		v := k.Version
		v.Body = "PROCESS-SEO-EDITED"
		v.AllowedTools = []string{"read_page"}
		if _, err := e.App.Skills.Update(ctx, skill.UpdateParams{UID: seoSkill, Version: v, Actor: 1}); err != nil {
			t.Fatal(err)
		}
		next := continued(t, erika, 1, first.UUID, false)
		if next.Status != "completed" || !next.HoldsProcessIs(true) {
			t.Fatalf("continuation = %+v", next)
		}
		req := e.LLM.Requests()[1]
		sys := systemOf(req.Messages)
		if !strings.Contains(sys, "PROCESS-SEO-V1") || strings.Contains(sys, "EDITED") {
			t.Fatalf("continuation composed %q", sys)
		}
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Name)
		}
		got := strings.Join(names, ",")
		for _, want := range []string{"update_page_metadata", "set_progress", "highlight_record"} {
			if !strings.Contains(got, want) {
				t.Errorf("tools %s lack the snapshot's %s", got, want)
			}
		}
		if strings.Contains(got, "read_record") {
			t.Errorf("tools %s include one the process does not declare", got)
		}
	})
}

// L6.4, L2.2(h): a withdrawn pin refuses the continuation as pin_withdrawn,
// and the next turn goes on without the process.
func TestL6_4_WithdrawnPinStopsTheTurnAndTheNextGoesOnWithout(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("one"), answer("three"))
		erika := e.As(wt.Erika)
		first := startSEO(t, erika, 1)
		k, _ := e.App.Skills.Get(ctx, seoSkill)
		if err := e.App.Skills.Revoke(ctx, 1, seoSkill, k.Digest()); err != nil {
			t.Fatal(err)
		}
		second := continued(t, erika, 1, first.UUID, false)
		if second.Status != "failed" || second.Refusal != "pin_withdrawn" {
			t.Fatalf("continuation after revocation = %+v", second)
		}
		third := continued(t, erika, 1, second.UUID, false)
		if third.Status != "completed" || !third.HoldsProcessIs(false) {
			t.Fatalf("the turn after = %+v", third)
		}
	})
}

// LC2, L6.4: a disabled or orphaned pinned process ends the tour at a
// continuation exactly as on resume: the turn is refused pin_withdrawn
// (failed, policy_denied), it records its lineage without the process, and
// the process is let go — after the skill is enabled again, the next turn
// holds no process and its prompt lacks the process text.
func TestLC2_DisabledOrOrphanedPinnedProcessEndsTheTourAtContinuationAndResume(t *testing.T) {
	withdraw := map[string]func(t *testing.T, e *wt.Env, db *store.DB){
		"disabled": func(t *testing.T, e *wt.Env, db *store.DB) {
			e.As(wt.Admin).Must("POST", "/api/skills/12/disable", nil, 200)
		},
		"orphaned": func(t *testing.T, e *wt.Env, db *store.DB) {
			// What a sync does when the upstream skill disappeared.
			exec(t, db, `UPDATE skills SET orphaned = TRUE, enabled = FALSE WHERE uid = 12`)
		},
	}
	restore := func(t *testing.T, e *wt.Env, db *store.DB) {
		exec(t, db, `UPDATE skills SET orphaned = FALSE WHERE uid = 12`)
		e.As(wt.Admin).Must("POST", "/api/skills/12/enable", nil, 200)
	}
	for name, off := range withdraw {
		for _, path := range []string{"continuation", "resume"} {
			t.Run(name+" at "+path, func(t *testing.T) {
				storetest.Each(t, func(t *testing.T, db *store.DB) {
					e := newEnv(t, db, nil)
					erika := e.As(wt.Erika)
					var refused wt.RunStatus
					if path == "continuation" {
						e.LLM.Add(answer("one"), answer("after"))
						first := startSEO(t, erika, 1)
						off(t, e, db)
						refused = continued(t, erika, 1, first.UUID, false)
						if l := lineage(t, erika, refused.UUID); l == nil || l.Pin != nil || !l.Released ||
							l.Predecessor != first.UUID {
							t.Errorf("lineage of the refused continuation = %+v, want one without pin, released, naming %s", l, first.UUID)
						}
					} else {
						e.LLM.Add(call("c1", "update_page_metadata", `{"page": 1, "fields": {"description": "new"}}`), answer("after"))
						first := startSEO(t, erika, 1)
						if first.Status != "waiting_for_approval" {
							t.Fatalf("first = %+v", first)
						}
						off(t, e, db)
						r := erika.Do("POST", "/api/runs/"+first.UUID+"/approval",
							wt.Approve{Approve: true, TurnDigest: digest(t, first)})
						if r.Status != 409 || r.ErrorCode() != "skill_withdrawn" {
							t.Fatalf("resume = %d %s, want 409 skill_withdrawn", r.Status, r.Body)
						}
						refused = erika.MustRun(first.UUID)
					}
					if refused.Status != "failed" || refused.TerminationReason != "policy_denied" ||
						refused.Refusal != "pin_withdrawn" || refused.ErrorClass != "process_invocation_refused" ||
						!refused.HoldsProcessIs(false) {
						t.Fatalf("refused %s = %+v, want failed policy_denied, refusal pin_withdrawn, holding nothing", path, refused)
					}
					calls := len(e.LLM.Requests())
					restore(t, e, db)
					next := continued(t, erika, 1, refused.UUID, false)
					// refusal is omitempty on the wire: absent and "" are one.
					if next.Status != "completed" || !next.HoldsProcessIs(false) || next.Refusal != "" {
						t.Fatalf("the turn after re-enabling = %+v, want completed without the process", next)
					}
					reqs := e.LLM.Requests()
					if len(reqs) != calls+1 || strings.Contains(systemOf(reqs[len(reqs)-1].Messages), "PROCESS-SEO-V1") {
						t.Errorf("the turn after re-enabling composed the process: %q", systemOf(reqs[len(reqs)-1].Messages))
					}
				})
			})
		}
	}
}
