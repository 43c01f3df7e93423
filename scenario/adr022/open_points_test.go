package adr022_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

func pagePoints(t *testing.T, c *wt.Client) []wt.OpenPoint {
	t.Helper()
	return wt.Decode[wt.OpenPoints](t, c.Must("GET", "/api/pages/1/open-points", nil, http.StatusOK)).OpenPoints
}

func countPoints(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM open_points").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// P.R1, P.R2, P.S1, P.D2: an accepted Überspringen records one open point per
// field of the card's target, keyed by the process skill and the
// conversation's page; its summary is built from labels and the page title in
// the reader's backend language.
func TestPR2_SkipRecordsOneOpenPointPerField(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "x", "seoTitle": "y"}`), answer("Weiter."))
		erika, paula := e.As(wt.Erika), e.As(wt.Paula)
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		conv = decided(t, e, erika, conv, "skip")
		if conv.Status != "idle" {
			t.Fatalf("after skip: %+v", conv)
		}
		pts := pagePoints(t, erika)
		if len(pts) != 2 {
			t.Fatalf("open points = %+v", pts)
		}
		fields := map[string]string{}
		for _, p := range pts {
			if p.Skill != 12 || p.SkillIdentifier != "seo" || p.Page != 1 || p.Table != "pages" || p.UID != 1 {
				t.Errorf("point = %+v", p)
			}
			fields[p.Field] = p.Summary
		}
		if fields["description"] != "Beschreibung fehlt auf „Home“" {
			t.Errorf("erika's (de) summary = %q", fields["description"])
		}
		en := pagePoints(t, paula)
		for _, p := range en {
			if p.Field == "description" && p.Summary != "Description is missing on “Home”" {
				t.Errorf("paula's (en) summary = %q", p.Summary)
			}
		}
		if out := conv.Outcomes; len(out) == 0 || out[0].Outcome != "skipped" {
			t.Errorf("outcome = %+v", out)
		}
	})
}

// P.R4: nothing is recorded for a variant, a plain denial, a card of a plain
// skill, a conversation without a skill, or a withdrawn proposal.
func TestPR4_NothingIsRecordedWithoutAnAcceptedSkipOfOneTarget(t *testing.T) {
	cases := []struct {
		name   string
		skill  int64
		answer string
	}{
		{"variant", seo, "variant"},
		{"a denial without reason", seo, "cancel"},
		{"skip sent to a plain card (a plain denial, P.R5)", tone, "skip"},
		{"no skill", 0, "skip"},
		{"withdrawn by a new message", seo, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db)
				e.LLM.Add(write("c1", `{"description": "x"}`), answer("ok"), answer("ok"))
				erika := e.As(wt.Erika)
				conv := said(t, e, erika, opened(t, erika, c.skill).ID, "Los")
				if conv.Status != "awaiting_approval" {
					t.Fatalf("conv = %+v", conv)
				}
				if c.answer == "" {
					said(t, e, erika, conv.ID, "Etwas anderes")
				} else {
					decided(t, e, erika, conv, c.answer)
				}
				if n := countPoints(t, db); n != 0 {
					t.Fatalf("%d open points recorded", n)
				}
			})
		})
	}
}

// P.R4 (more than one call): a card with two calls records nothing.
func TestPR4_CardWithMoreThanOneCallRecordsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(llmtest.Reply{ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "update_page_metadata", Arguments: `{"page": 1, "fields": {"description": "x"}}`},
			{ID: "c2", Name: "update_content", Arguments: `{"uid": 100, "fields": {"header": "y"}}`},
		}}, answer("ok"))
		erika := e.As(wt.Erika)
		conv := said(t, e, erika, opened(t, erika, tone).ID, "Los")
		if conv.Card == nil || len(conv.Card.Calls) != 2 {
			t.Fatalf("card = %+v", conv.Card)
		}
		decided(t, e, erika, conv, "skip")
		if n := countPoints(t, db); n != 0 {
			t.Fatalf("%d open points recorded", n)
		}
	})
}

// P.C1, P.O1: an open point is offered again in the next run's system
// message, and an applied complete write to the same record and field closes it.
func TestPC1_PO1_OfferedAgainAndClosedByAnAppliedWrite(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "first"}`), answer("weiter"),
			write("c2", `{"description": "second"}`), answer("fertig"))
		erika := e.As(wt.Erika)
		first := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		decided(t, e, erika, first, "skip")
		if countPoints(t, db) != 1 {
			t.Fatal("no open point recorded")
		}
		// A new conversation with the same skill on the same page is offered the point.
		second := said(t, e, erika, opened(t, erika, seo).ID, "Nochmal")
		reqs := e.LLM.Requests()
		sys := reqs[len(reqs)-1].Messages[0]
		if sys.Role != llm.RoleSystem || !strings.Contains(sys.Content, "pages:1") || !strings.Contains(sys.Content, "description") || strings.Contains(sys.Content, "first") {
			t.Fatalf("system message = %q", sys.Content)
		}
		second = decided(t, e, erika, second, "apply")
		if n := countPoints(t, db); n != 0 {
			t.Fatalf("the applied write left %d open points", n)
		}
		if out := second.Outcomes; len(out) == 0 || out[0].Outcome != "applied" {
			t.Errorf("outcome = %+v", out)
		}
	})
}

// P.K1, P.K2, P.K4: Behalten closes the open points of the target and records
// none; its outcome is kept and counted under Behalten.
func TestPK1_KeepClosesAndRecordsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "a"}`), answer("weiter"), write("c2", `{"description": "b"}`), answer("fertig"))
		erika := e.As(wt.Erika)
		decided(t, e, erika, said(t, e, erika, opened(t, erika, seo).ID, "Los"), "skip")
		if countPoints(t, db) != 1 {
			t.Fatal("no open point")
		}
		conv := decided(t, e, erika, said(t, e, erika, opened(t, erika, seo).ID, "Los"), "keep")
		if n := countPoints(t, db); n != 0 {
			t.Fatalf("keep left %d open points", n)
		}
		if out := conv.Outcomes; len(out) == 0 || out[0].Outcome != "kept" {
			t.Errorf("outcome = %+v", out)
		}
		var fields string
		_ = db.QueryRow(context.Background(), "SELECT fields FROM records WHERE tbl = 'pages' AND uid = 1").Scan(&fields)
		if strings.Contains(fields, `"description":"b"`) {
			t.Error("keep wrote the proposal")
		}
	})
}

// P.D1, P.D3, P.Z1: the dashboard lists what the reader may see, newest first,
// the limit counted after visibility; a point survives the deletion of its
// target outside the chat and only an applied write or keep closes it.
func TestPD1_PZ1_DashboardAndSurvivalOfDeletedTargets(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "a"}`), answer("ok"))
		erika, otto := e.As(wt.Erika), e.As(wt.Otto)
		decided(t, e, erika, said(t, e, erika, opened(t, erika, seo).ID, "Los"), "skip")
		got := wt.Decode[wt.OpenPoints](t, erika.Must("GET", "/api/open-points?limit=5", nil, 200)).OpenPoints
		if len(got) != 1 {
			t.Fatalf("dashboard = %+v", got)
		}
		// otto's groups may not edit the excluded description field: he does not see it (P.D3).
		if _, err := db.Exec(context.Background(), `INSERT INTO be_groups (uid, title, tables_select, tables_modify, languages, mounts) VALUES (8, 'No grants', '["pages"]', '["pages"]', '[0]', '[1]')`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(context.Background(), `UPDATE be_users SET group_uids = '[8]' WHERE uid = 4`); err != nil {
			t.Fatal(err)
		}
		if l := wt.Decode[wt.OpenPoints](t, otto.Must("GET", "/api/open-points", nil, 200)).OpenPoints; len(l) != 0 {
			t.Errorf("otto sees %+v", l)
		}
		if r := erika.Do("GET", "/api/open-points?limit=0", nil); r.Status != 400 {
			t.Errorf("limit 0 = %d", r.Status)
		}
		// P.Z1: deleting the page outside the chat keeps the point stored.
		if _, err := db.Exec(context.Background(), `UPDATE records SET deleted = TRUE WHERE tbl = 'pages' AND uid = 1`); err != nil {
			t.Fatal(err)
		}
		if countPoints(t, db) != 1 {
			t.Fatal("the point was closed by the deletion")
		}
		a := erika.Do("GET", "/api/pages/1/open-points", nil)
		b := erika.Do("GET", "/api/pages/999/open-points", nil)
		if a.Status != 404 || b.Status != 404 || string(a.Body) != string(b.Body) {
			t.Errorf("deleted %d %s vs missing %d %s", a.Status, a.Body, b.Status, b.Body)
		}
	})
}
