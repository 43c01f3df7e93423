package mcp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/chat"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// A four-eyes card is not asked of its requester: the tool returns saying
// a second person must release it; once paula released it (runs API, as
// her inbox does), the requester's conversation shows the change applied.
func TestFourEyesCardIsNotElicitedFromItsRequester(t *testing.T) {
	e := wt.New(t, storetest.SQLite(t), wt.TourSite, &wt.Options{Workers: 1})
	e.LLM.Add(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "update_page_metadata",
		Arguments: `{"page": 1, "fields": {"description": "Zwei Personen haben diese Beschreibung geprüft."}}`}}},
		llmtest.Reply{Content: "Danke."})
	cs := connect(t, e, wt.Erika, func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		t.Errorf("a four-eyes card was elicited from its requester: %s", req.Params.Message)
		return &sdk.ElicitResult{Action: "cancel"}, nil
	})
	res := call(t, cs, "start_tour", map[string]any{"page": 1, "language": 0, "configuration": 2, "message": "Beschreibung bitte"})
	v := view(t, "start_tour", res)
	if v.Status != chat.AwaitingApproval || v.Card == nil || v.Card.ApproveBlocked == "" {
		t.Fatalf("start_tour on four eyes: %s card %+v, want a card a second person must release", v.Status, v.Card)
	}
	if !strings.Contains(text(res), "Eine zweite Person muss diese Änderung freigeben.") {
		t.Errorf("the answer does not say a second person must release it:\n%s", text(res))
	}
	if code := errorCode(t, call(t, cs, "answer_card", map[string]any{"conversation": v.ID, "turnDigest": v.Card.TurnDigest, "answer": "approve"})); code != "second_approver" {
		t.Errorf("the requester's approve: code %q, want second_approver", code)
	}
	_, r := e.As(wt.Paula).Decide(v.PendingRun, wt.Approve{Approve: true, TurnDigest: v.Card.TurnDigest})
	if r.Status != http.StatusOK && r.Status != http.StatusAccepted {
		t.Fatalf("paula's release: %d %s", r.Status, r.Body)
	}
	after := view(t, "get_conversation", call(t, cs, "get_conversation", map[string]any{"conversation": v.ID, "after": v.UpdatedAt.Format(time.RFC3339Nano)}))
	released := false
	for _, m := range after.Messages {
		released = released || strings.HasPrefix(m.Notice, "approved_elsewhere")
	}
	if after.Card != nil || !released {
		t.Errorf("after paula's release: %s card %v messages %+v, want the release told", after.Status, after.Card, after.Messages)
	}
	preview := e.As(wt.Erika).Must("GET", "/api/pages/1/preview?language=0", nil, http.StatusOK)
	if !strings.Contains(string(preview.Body), "Zwei Personen haben diese Beschreibung geprüft.") {
		t.Errorf("the page after the release: %s", preview.Body)
	}
}

// A second approver sees and releases a four-eyes card over MCP: paula's
// list_inbox shows erika's card with its proposal, release_card writes it;
// otto, who may not release it, sees nothing and is refused.
func TestASecondApproverReleasesAFourEyesCardOverMCP(t *testing.T) {
	e := wt.New(t, storetest.SQLite(t), wt.TourSite, &wt.Options{Workers: 1})
	e.LLM.Add(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "update_page_metadata",
		Arguments: `{"page": 1, "fields": {"description": "Über MCP freigegeben."}}`}}},
		llmtest.Reply{Content: "Danke."})
	erika := connect(t, e, wt.Erika, nil)
	v := view(t, "start_tour", call(t, erika, "start_tour", map[string]any{"page": 1, "language": 0, "configuration": 2, "message": "Beschreibung bitte"}))
	if v.Card == nil || v.Card.ApproveBlocked == "" {
		t.Fatalf("start_tour on four eyes: %s card %+v, want a card a second person must release", v.Status, v.Card)
	}
	otto := connect(t, e, wt.Otto, nil)
	if res := call(t, otto, "list_inbox", map[string]any{}); res.IsError || strings.Contains(text(res), v.PendingRun) {
		t.Errorf("otto's list_inbox: %s", text(res))
	}
	if code := errorCode(t, call(t, otto, "release_card", map[string]any{"run": v.PendingRun, "turnDigest": v.Card.TurnDigest})); code == "" {
		t.Errorf("otto released erika's card")
	}
	paula := connect(t, e, wt.Paula, nil)
	inbox := call(t, paula, "list_inbox", map[string]any{})
	if inbox.IsError || !strings.Contains(text(inbox), v.PendingRun) || !strings.Contains(text(inbox), "Über MCP freigegeben.") || !strings.Contains(text(inbox), v.Card.TurnDigest) {
		t.Fatalf("paula's list_inbox does not show erika's card:\n%s", text(inbox))
	}
	if code := errorCode(t, call(t, paula, "release_card", map[string]any{"run": v.PendingRun, "turnDigest": "not-the-card"})); code == "" {
		t.Errorf("a release naming another card was taken")
	}
	released := call(t, paula, "release_card", map[string]any{"run": v.PendingRun, "turnDigest": v.Card.TurnDigest})
	if released.IsError {
		t.Fatalf("paula's release_card: %s", text(released))
	}
	after := view(t, "get_conversation", call(t, erika, "get_conversation", map[string]any{"conversation": v.ID, "after": v.UpdatedAt.Format(time.RFC3339Nano)}))
	if after.Card != nil {
		t.Errorf("after paula's release erika's conversation still shows the card: %s", after.Status)
	}
	preview := e.As(wt.Erika).Must("GET", "/api/pages/1/preview?language=0", nil, http.StatusOK)
	if !strings.Contains(string(preview.Body), "Über MCP freigegeben.") {
		t.Errorf("the page after the release over MCP: %s", preview.Body)
	}
}
