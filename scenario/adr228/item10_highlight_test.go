package adr228_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L10.1–L10.3 and the one approval per turn of a process run: reads run
// before the suspend in turn order, a second approval-bound call gets an
// error, progress and highlight are recorded and shown on the status.
func TestL10_HighlightProgressAndOneApprovalPerTurn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(calls(
			llm.ToolCall{ID: "c1", Name: "set_progress", Arguments: `{"current": 1, "total": 3}`},
			llm.ToolCall{ID: "c2", Name: "highlight_record", Arguments: `{"table": "tt_content", "uid": 100}`},
			llm.ToolCall{ID: "c3", Name: "update_page_metadata", Arguments: `{"page": 1, "fields": {"description": "first"}}`},
			llm.ToolCall{ID: "c4", Name: "update_page_metadata", Arguments: `{"page": 1, "fields": {"seoTitle": "second"}}`},
			llm.ToolCall{ID: "c5", Name: "highlight_record", Arguments: `{"table": "tt_content", "uid": 101}`},
		), answer("done"))
		erika := e.As(wt.Erika)
		st := startSEO(t, erika, 1)
		if st.Status != "waiting_for_approval" || st.Pending == nil {
			t.Fatalf("status = %+v", st)
		}
		p := st.Pending
		if len(p.Calls) != 1 || p.Calls[0].ID != "c3" || p.Answers != "process" {
			t.Fatalf("pending = %+v", p)
		}
		var pr struct{ Current, Total int }
		if err := json.Unmarshal(st.Progress, &pr); err != nil || pr.Current != 1 || pr.Total != 3 {
			t.Errorf("progress = %s (%v)", st.Progress, err)
		}
		var h wt.Target
		if err := json.Unmarshal(st.Highlight, &h); err != nil || h.Table != "tt_content" || h.UID != 100 {
			t.Errorf("highlight = %s (the element in another language must not replace it)", st.Highlight)
		}
		done, r := erika.Decide(st.UUID, wt.Approve{Approve: true, TurnDigest: p.TurnDigest})
		if r.Status != http.StatusOK || done.Status != "completed" {
			t.Fatalf("after approval: %d %s", r.Status, r.Body)
		}
		reqs := e.LLM.Requests()
		var results []string
		for _, m := range reqs[1].Messages {
			if m.Role == llm.RoleTool {
				results = append(results, m.ToolCallID+"="+m.Content)
			}
		}
		all := strings.Join(results, "\n")
		for _, want := range []string{`c4={"error":"one approval per turn in a process"}`, `c5={"error":"not a highlight target of this run"}`, `c3=`} {
			if !strings.Contains(all, want) {
				t.Errorf("tool results lack %s:\n%s", want, all)
			}
		}
	})
}
