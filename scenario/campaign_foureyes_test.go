package scenario_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// fourEyesCampaignSite is the standard site with a plain skill "ton"
// (uid 13) attached to the four-eyes configuration (uid 2).
const fourEyesCampaignSite = wt.Site + `
skillSources:
  - {uid: 2, type: backend, title: Site, trustLevel: first_party}
skills:
  - uid: 13
    source: 2
    identifier: ton
    enabled: true
    markdown: "---\nname: Ton\ndescription: Freundlich schreiben.\n---\nSchreib freundlich."
approvals:
  - {skill: 13, digest: current, approvedBy: 1}
attachments:
  - {configuration: 2, skill: 13, loadMode: always}
`

// Under a four-eyes configuration a campaign's cards still need the second
// person: a bulk apply by the requester writes nothing and answers
// awaiting_release for the card, which waits in paula's inbox; once paula
// released it there, the page holds the change.
func TestACampaignOnAFourEyesConfigurationSendsItsCardsToTheApprover(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, fourEyesCampaignSite, &wt.Options{Workers: 1})
		e.LLM.Add(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "update_page_metadata",
			Arguments: `{"page": 1, "fields": {"description": "Zwei Personen prüfen jede Änderung dieser Startseite."}}`}}},
			llmtest.Reply{Content: "Danke."})
		erika, paula := e.As(wt.Erika), e.As(wt.Paula)
		v := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{"process": "ton", "configuration": 2, "rootPage": 1}, http.StatusCreated))
		untilCampaign(t, erika, v.ID, "done", func(v campaignView) bool { return v.State == "done" && v.Counts.Proposals == 1 })
		list := wt.Decode[campaignCards](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d/cards", v.ID), nil, http.StatusOK))
		if len(list.Cards) != 1 {
			t.Fatalf("cards: %+v", list)
		}
		c := list.Cards[0]
		res := wt.Decode[struct{ Results []campaignResult }](t, erika.Must("POST", fmt.Sprintf("/api/campaigns/%d/answers", v.ID),
			map[string]any{"answer": "apply", "cards": []map[string]any{{"conversation": c.Conversation, "turnDigest": c.TurnDigest}}}, http.StatusOK))
		if len(res.Results) != 1 || res.Results[0].Outcome != "awaiting_release" || res.Results[0].Code != "second_approver" {
			t.Fatalf("the requester's apply: %+v, want awaiting_release", res.Results)
		}
		if d := pageDescription(t, db, 1); strings.Contains(d, "Zwei Personen") {
			t.Fatalf("written without the second person: %s", d)
		}
		inbox, _ := paula.Inbox("", 0)
		var run wt.RunStatus
		for _, r := range inbox.Runs {
			if r.Pending != nil && r.Pending.TurnDigest == c.TurnDigest {
				run = r
			}
		}
		if run.UUID == "" {
			t.Fatalf("the card is not in paula's inbox: %+v", inbox)
		}
		if _, r := paula.Decide(run.UUID, wt.Approve{Approve: true, TurnDigest: c.TurnDigest}); r.Status != http.StatusOK && r.Status != http.StatusAccepted {
			t.Fatalf("paula's release: %d %s", r.Status, r.Body)
		}
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(pageDescription(t, db, 1), "Zwei Personen") {
			if time.Now().After(deadline) {
				t.Fatalf("the released change never landed: %s", pageDescription(t, db, 1))
			}
			time.Sleep(50 * time.Millisecond) // polling a condition of the running application
		}
	})
}
