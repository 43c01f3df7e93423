package adr022_test

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

// P.R5: a reason sent for a card that does not offer it is a plain denial —
// on POST /api/runs/{uuid}/approval too, not only in the chat. A run without
// a process offers approve or deny: the model gets the denial without the
// reason, and the approval event records none. A process write card offers
// the reasons, and the model gets the one sent.
func TestPR5_AReasonTheCardDoesNotOfferIsAPlainDenialOnTheRunsAPI(t *testing.T) {
	cases := []struct {
		name    string
		inv     *wt.Invocation
		answers string
		want    string // the denial the model gets
	}{
		{"plain run, skip", nil, "approval", `{"decided_by":"run_owner","error":"approval_denied"}`},
		{"plain run, keep", nil, "approval", `{"decided_by":"run_owner","error":"approval_denied"}`},
		{"process run, skip", &wt.Invocation{Skill: seo, Subject: &wt.Subject{Table: "pages", UID: 1, Language: 0}}, "process",
			`{"decided_by":"run_owner","error":"approval_denied","reason":"skip"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db)
				e.LLM.Add(write("c1", `{"description": "x"}`), answer("ok"))
				erika := e.As(wt.Erika)
				st, r := erika.StartRun(wt.StartRun{Configuration: 1, Messages: []wt.Message{{Role: "user", Content: "Los"}}, Invocation: c.inv})
				if r.Status != http.StatusCreated {
					t.Fatalf("POST /api/runs = %d, want 201: %s", r.Status, r.Body)
				}
				if st.Status != "waiting_for_approval" || st.Pending == nil || st.Pending.Answers != c.answers {
					t.Fatalf("run = %+v, want waiting with answers %s", st, c.answers)
				}
				reason := c.name[strings.Index(c.name, ", ")+2:]
				done, r := erika.Decide(st.UUID, wt.Approve{Approve: false, TurnDigest: st.Pending.TurnDigest, Reason: reason})
				if r.Status != http.StatusOK {
					t.Fatalf("approval = %d, want 200: %s", r.Status, r.Body)
				}
				if done.Status != "completed" {
					t.Fatalf("after the denial: %+v", done)
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
				evs, r := erika.Events(st.UUID, 0)
				if r.Status != http.StatusOK {
					t.Fatalf("events = %d, want 200: %s", r.Status, r.Body)
				}
				for _, ev := range evs {
					var p struct {
						Approved *bool   `json:"approved"`
						Reason   *string `json:"reason"`
					}
					if err := json.Unmarshal(ev.Payload, &p); err != nil {
						t.Fatalf("event %d payload: %v", ev.Sequence, err)
					}
					if ev.Kind == "approval" && p.Approved != nil && !*p.Approved {
						wantReason := ""
						if c.answers == "process" {
							wantReason = reason
						}
						if p.Reason == nil || *p.Reason != wantReason {
							t.Errorf("approval event reason = %s, want %q", ev.Payload, wantReason)
						}
					}
				}
			})
		})
	}
}
