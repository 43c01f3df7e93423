package adr228_test

import (
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
		st := invoke(t, erika, 1, nil)
		if st["status"] != "waiting_for_approval" {
			t.Fatalf("status = %v", st)
		}
		p := st["pending"].(map[string]any)
		cs := p["calls"].([]any)
		if len(cs) != 1 || cs[0].(map[string]any)["id"] != "c3" || p["answers"] != "process" {
			t.Fatalf("pending = %v", p)
		}
		if pr := st["progress"].(map[string]any); pr["current"] != 1.0 || pr["total"] != 3.0 {
			t.Errorf("progress = %v", pr)
		}
		if h := st["highlight"].(map[string]any); h["table"] != "tt_content" || h["uid"] != 100.0 {
			t.Errorf("highlight = %v (the element in another language must not replace it)", h)
		}
		done := erika.Must("POST", "/api/runs/"+st["uuid"].(string)+"/approval", map[string]any{"approve": true, "turnDigest": digest(t, st)}, 200).Map(t)
		if done["status"] != "completed" {
			t.Fatalf("after approval: %v", done)
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
