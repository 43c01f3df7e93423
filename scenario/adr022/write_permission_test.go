package adr022_test

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

// A write the initiator may not perform never becomes a
// card. The preview reads the record as the acting user; when she may not
// write the target — the table, a field, the page permission, the language —
// the call is answered to the model as an error result "permission_denied: …"
// (a page outside her mounts like a missing one) and the turn goes on
// without a card; nothing is written.
func TestWriteTheEditorMayNotPerformNeverBecomesACard(t *testing.T) {
	cases := []struct {
		name  string
		setup string // SQL that takes erika's right away
		call  string // a write proposed on page 1 (or its translation 11)
		// afterStart: the right is taken once the conversation began — a
		// tour does not even begin on a page she may only read (409
		// page_read_only), so the page's permission goes between the start
		// and the turn.
		afterStart bool
	}{
		{"page permission", `UPDATE records SET owner_uid = 1, perms_group = 1 WHERE tbl = 'pages' AND uid = 1`,
			`{"page": 1, "fields": {"description": "x"}}`, true},
		{"table", `UPDATE be_groups SET tables_modify = '["tt_content"]' WHERE uid = 1`,
			`{"page": 1, "fields": {"description": "x"}}`, false},
		{"field", `UPDATE be_groups SET non_exclude_fields = '["pages:seoTitle"]' WHERE uid = 1`,
			`{"page": 1, "fields": {"description": "x"}}`, false},
		{"language", `UPDATE be_groups SET languages = '[0]' WHERE uid = 1`,
			`{"page": 11, "fields": {"description": "x"}}`, false},
		{"mount", `INSERT INTO records (tbl, uid, pid, owner_uid, group_uid, perms_user, perms_group, perms_everybody, fields)
			VALUES ('pages', 30, 0, 2, 1, 31, 27, 1, '{"title":"Outside"}')`,
			`{"page": 30, "fields": {"description": "x"}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db)
				take := func() {
					if _, err := db.Exec(context.Background(), c.setup); err != nil {
						t.Fatal(err)
					}
				}
				if !c.afterStart {
					take()
				}
				e.LLM.Add(writeArgs("c1", c.call), answer("Das darf ich nicht ändern."))
				erika := e.As(wt.Erika)
				id := opened(t, erika, seo).ID
				if c.afterStart {
					take()
				}
				conv := said(t, e, erika, id, "Los")
				if conv.Status != "idle" || conv.Card != nil {
					t.Fatalf("a write erika may not perform became a card: %+v", conv)
				}
				reqs := e.LLM.Requests()
				if len(reqs) != 2 {
					t.Fatalf("%d model requests, want 2", len(reqs))
				}
				var result string
				for _, m := range reqs[1].Messages {
					if m.Role == llm.RoleTool && m.ToolCallID == "c1" {
						result = m.Content
					}
				}
				want := `"error":"permission_denied: `
				if c.name == "mount" {
					want = `"error":"page not found"` // outside the mounts: answered like a missing page
				}
				if !strings.Contains(result, want) {
					t.Errorf("the model got %q, want an error result %s…", result, want)
				}
				if last := conv.Messages[len(conv.Messages)-1]; last.Content != "Das darf ich nicht ändern." {
					t.Errorf("last message = %+v", last)
				}
				var n int
				_ = db.QueryRow(context.Background(), "SELECT COUNT(*) FROM record_history").Scan(&n)
				if n != 0 {
					t.Errorf("%d history rows: something was written", n)
				}
			})
		})
	}
}

func writeArgs(id, args string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: "update_page_metadata", Arguments: args}}}
}
