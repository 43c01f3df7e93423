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
		first := invoke(t, erika, 1, nil)
		k, err := e.App.Skills.SkillGet(ctx, seoSkill)
		if err != nil {
			t.Fatal(err)
		}
		v := k.Version
		v.Body = "PROCESS-SEO-EDITED"
		v.AllowedTools = []string{"read_page"}
		if _, err := e.App.Skills.SkillUpdate(ctx, skill.SkillUpdateParams{UID: seoSkill, Version: v, Actor: 1}); err != nil {
			t.Fatal(err)
		}
		next := continueRun(t, erika, 1, first["uuid"].(string))
		if next["status"] != "completed" || next["holdsProcess"] != true {
			t.Fatalf("continuation = %v", next)
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
		first := invoke(t, erika, 1, nil)
		k, _ := e.App.Skills.SkillGet(ctx, seoSkill)
		if err := e.App.Skills.Revoke(ctx, 1, seoSkill, k.Digest()); err != nil {
			t.Fatal(err)
		}
		second := continueRun(t, erika, 1, first["uuid"].(string))
		if second["status"] != "failed" || second["refusal"] != "pin_withdrawn" {
			t.Fatalf("continuation after revocation = %v", second)
		}
		third := continueRun(t, erika, 1, second["uuid"].(string))
		if third["status"] != "completed" || third["holdsProcess"] != false {
			t.Fatalf("the turn after = %v", third)
		}
	})
}
