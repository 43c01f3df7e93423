package mcp_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"waymark/internal/campaign"
	"waymark/internal/demo"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// The campaign tools over the demo site with the offline model: a campaign
// started with start_campaign runs every page it may edit to its first card
// and skips the Services branch with its reason (get_campaign counts it);
// list_campaign_cards shows the cards by page with their proposals; an
// answer_campaign_cards in which one card changed since the list was drawn
// names that card and answers the others; another user's campaign is
// unknown to her. Every structured content matches its output schema.
func TestCampaignToolsStartReadListAndAnswer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), &wt.Options{Workers: 2, ChatWorkers: 4})
		cs := connect(t, e, "demo-token-erika", nil)
		tools, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		schemas := map[string]*jsonschema.Resolved{}
		for _, tool := range tools.Tools {
			raw, _ := json.Marshal(tool.OutputSchema)
			var s jsonschema.Schema
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			if schemas[tool.Name], err = s.Resolve(nil); err != nil {
				t.Fatal(err)
			}
		}
		structured := func(name string, args map[string]any, into any) {
			t.Helper()
			res := call(t, cs, name, args)
			if res.IsError {
				t.Fatalf("%s: %s", name, text(res))
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var content any
			_ = json.Unmarshal(raw, &content)
			if err := schemas[name].Validate(content); err != nil {
				t.Errorf("%s: %s does not match its output schema: %v", name, raw, err)
			}
			if err := json.Unmarshal(raw, into); err != nil {
				t.Fatal(err)
			}
		}
		// The estimate first: the pages start_campaign would cover, the
		// default tokens per tour (no earlier tour yet), no cost on a
		// configuration without prices; it starts nothing.
		var est campaign.Estimate
		structured("estimate_campaign", map[string]any{"process": "seo-optimieren", "rootPage": 1, "depth": 2, "budget": 3.5}, &est)
		if est.Pages != 8 || est.Basis != campaign.BasisDefault || est.MeanTokensIn != campaign.DefaultTourTokensIn || est.EstimatedCost != nil || est.OverBudget {
			t.Errorf("estimate_campaign: %+v", est)
		}
		var v campaign.View
		structured("start_campaign", map[string]any{"process": "seo-optimieren", "rootPage": 1, "depth": 2, "budget": 3.5}, &v)
		if v.State != campaign.Running || v.Counts.Total != 8 || string(v.Budget) != "3.5" {
			t.Fatalf("start_campaign: %+v", v)
		}
		deadline := time.Now().Add(60 * time.Second)
		for v.State != campaign.Done {
			if time.Now().After(deadline) {
				t.Fatalf("the campaign never ended its pickups: %+v", v)
			}
			time.Sleep(50 * time.Millisecond) // polling a condition of the running application
			structured("get_campaign", map[string]any{"campaign": v.ID}, &v)
		}
		if v.Counts.Skipped != 3 || v.Counts.Proposals < 2 {
			t.Fatalf("get_campaign: %+v, want the three read-only pages skipped", v.Counts)
		}
		var page campaign.CardPage
		structured("list_campaign_cards", map[string]any{"campaign": v.ID}, &page)
		if page.Total < 2 || len(page.Cards[0].Fields) == 0 {
			t.Fatalf("list_campaign_cards: %+v", page)
		}
		first := page.Cards[0]
		wt.Decode[any](t, e.As("demo-token-erika").Must("POST", "/api/conversations/"+itoa(first.Conversation)+"/answer",
			map[string]any{"turnDigest": first.TurnDigest, "answer": "skip"}, 202))
		refs := []map[string]any{}
		for _, c := range page.Cards[:2] {
			refs = append(refs, map[string]any{"conversation": c.Conversation, "turnDigest": c.TurnDigest})
		}
		var res struct{ Results []campaign.Result }
		structured("answer_campaign_cards", map[string]any{"campaign": v.ID, "answer": "keep", "cards": refs}, &res)
		if len(res.Results) != 2 || res.Results[0].Code != "stale_card" || res.Results[1].Outcome != "answered" {
			t.Errorf("answer_campaign_cards: %+v, want the changed card named and the other answered", res.Results)
		}
		paula := connect(t, e, "demo-token-paula", nil)
		if code := errorCode(t, call(t, paula, "get_campaign", map[string]any{"campaign": v.ID})); code != "not_found" {
			t.Errorf("paula's get_campaign of erika's: %q, want not_found", code)
		}
		if code := errorCode(t, call(t, cs, "start_campaign", map[string]any{"process": "seo-optimieren", "rootPage": 1, "depth": 11})); code != "bad_request" {
			t.Errorf("a depth out of range: %q, want bad_request", code)
		}
	})
}
