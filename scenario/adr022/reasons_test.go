package adr022_test

import (
	"net/http"
	"strings"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// P.R5: a reason sent for a card that does not offer it is a plain denial —
// on POST /api/runs/{uuid}/approval too, not only in the chat. A run without
// a process offers approve or deny: the model gets the denial without the
// reason, and the approval event records none. A process write card offers
// the reasons, and the model gets the one sent.
func TestPR5_AReasonTheCardDoesNotOfferIsAPlainDenialOnTheRunsAPI(t *testing.T) {
	cases := []struct {
		name    string
		body    map[string]any
		answers string
		want    string // the denial the model gets
	}{
		{"plain run, skip", map[string]any{}, "approval", `{"decided_by":"run_owner","error":"approval_denied"}`},
		{"plain run, keep", map[string]any{}, "approval", `{"decided_by":"run_owner","error":"approval_denied"}`},
		{"process run, skip", map[string]any{"invocation": map[string]any{"skill": seo,
			"subject": map[string]any{"table": "pages", "uid": 1, "language": 0}}}, "process",
			`{"decided_by":"run_owner","error":"approval_denied","reason":"skip"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db)
				e.LLM.Add(write("c1", `{"description": "x"}`), answer("ok"))
				erika := e.As(wt.Erika)
				body := map[string]any{"configuration": 1, "messages": []map[string]any{{"role": "user", "content": "Los"}}}
				for k, v := range c.body {
					body[k] = v
				}
				st := erika.Must("POST", "/api/runs", body, http.StatusCreated).Map(t)
				pending, _ := st["pending"].(map[string]any)
				if st["status"] != "waiting_for_approval" || pending["answers"] != c.answers {
					t.Fatalf("run = %v, want waiting with answers %s", st, c.answers)
				}
				reason := c.name[strings.Index(c.name, ", ")+2:]
				done := erika.Must("POST", "/api/runs/"+st["uuid"].(string)+"/approval",
					map[string]any{"approve": false, "turnDigest": pending["turnDigest"], "reason": reason}, http.StatusOK).Map(t)
				if done["status"] != "completed" {
					t.Fatalf("after the denial: %v", done)
				}
				reqs := e.LLM.Requests()
				var got string
				for _, m := range reqs[len(reqs)-1].Messages {
					if m.Role == llm.RoleTool && m.ToolCallID == "c1" {
						got = m.Content
					}
				}
				if got != c.want {
					t.Errorf("the model got %s, want %s", got, c.want)
				}
				evs := erika.Must("GET", "/api/runs/"+st["uuid"].(string)+"/events", nil, 200).Map(t)["events"].([]any)
				for _, ev := range evs {
					m := ev.(map[string]any)
					p := m["payload"].(map[string]any)
					if m["kind"] == "approval" && p["approved"] == false {
						wantReason := ""
						if c.answers == "process" {
							wantReason = reason
						}
						if p["reason"] != wantReason {
							t.Errorf("approval event reason = %v, want %q", p["reason"], wantReason)
						}
					}
				}
			})
		})
	}
}
