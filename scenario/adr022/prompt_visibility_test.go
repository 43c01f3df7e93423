package adr022_test

import (
	"context"
	"strings"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// P.O1 with P.O2/P.D1: the open points the system prompt
// offers again pass the same visibility rule as list_open_points and the
// dashboard — none on a table the user may not read, none on a deleted
// target — and the prompt lists exactly what GET /api/pages/{uid}/open-points
// lists for the user.
func TestPO1_ThePromptsOpenPointsPassTheVisibilityRule(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		for _, q := range []string{
			`INSERT INTO open_points (skill_uid, page_uid, tbl, uid, field, language, created_at) VALUES
				(12, 1, 'pages', 1, 'description', 0, 3),
				(12, 1, 'tt_content', 100, 'header', 0, 2),
				(12, 1, 'pages', 2, 'description', 0, 1)`,
			`UPDATE be_groups SET tables_select = '["pages"]', tables_modify = '["pages"]' WHERE uid = 1`, // tt_content unreadable
			`UPDATE records SET deleted = TRUE WHERE tbl = 'pages' AND uid = 2`,                           // a deleted target
		} {
			if _, err := db.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		e.LLM.Add(answer("Hallo"))
		erika := e.As(wt.Erika)
		said(t, e, erika, opened(t, erika, seo).ID, "Los")
		sys := e.LLM.Requests()[0].Messages[0]
		if sys.Role != llm.RoleSystem || !strings.Contains(sys.Content, "- pages:1 description") {
			t.Fatalf("system message = %q, want the visible point pages:1 description", sys.Content)
		}
		for _, hidden := range []string{"tt_content:100", "pages:2"} {
			if strings.Contains(sys.Content, hidden) {
				t.Errorf("the system message offers %s, which erika's list does not show: %q", hidden, sys.Content)
			}
		}
		if pts := pagePoints(t, erika); len(pts) != 1 {
			t.Errorf("erika's page list = %v, want the one point the prompt offers", pts)
		}
	})
}
