package scenario_test

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// budgetSite is wt.Site with three more pages below Home (five pages at
// depth 1) and an approved process "seo" (uid 12) on the chat configuration.
var budgetSite = strings.Replace(wt.Site, "records:\n", `  - {uid: 3, pid: 1, title: Team, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 0}, fields: {description: ""}}
  - {uid: 4, pid: 1, title: Jobs, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 0}, fields: {description: ""}}
  - {uid: 5, pid: 1, title: Contact, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 0}, fields: {description: ""}}
records:
`, 1) + `
skillSources:
  - {uid: 2, type: backend, title: Site, trustLevel: first_party}
skills:
  - uid: 12
    source: 2
    identifier: seo
    enabled: true
    markdown: "---\nname: SEO optimieren\ndescription: Die Seite verbessern.\nprocess: true\nallowed-tools: [read_page, update_page_metadata, set_progress]\n---\nEine Änderung pro Schritt."
approvals:
  - {skill: 12, digest: current, approvedBy: 1}
attachments:
  - {configuration: 1, skill: 12, loadMode: always}
`

type (
	spentView struct {
		PromptTokens     int64   `json:"promptTokens"`
		CompletionTokens int64   `json:"completionTokens"`
		Cost             float64 `json:"cost"`
	}
	budgetCampaign struct {
		ID     int64     `json:"id"`
		State  string    `json:"state"`
		Budget *float64  `json:"budget"`
		Spent  spentView `json:"spent"`
		Counts struct {
			Total, Pending, Running, Proposals, Skipped, Failed, Done int
		} `json:"counts"`
	}
	campaignEstimate struct {
		Pages         int      `json:"pages"`
		Basis         string   `json:"basis"`
		Tours         int      `json:"tours"`
		MeanTokensIn  int64    `json:"meanTokensIn"`
		MeanTokensOut int64    `json:"meanTokensOut"`
		TokensIn      int64    `json:"tokensIn"`
		TokensOut     int64    `json:"tokensOut"`
		EstimatedCost *float64 `json:"estimatedCost"`
		Budget        *float64 `json:"budget"`
		OverBudget    bool     `json:"overBudget"`
	}
)

// price sets the chat configuration's prices per million tokens.
func price(t *testing.T, e *wt.Env, in, out float64) {
	t.Helper()
	cfg := e.As(wt.Admin).Must("GET", "/api/admin/configurations/1", nil, http.StatusOK).Map(t)
	cfg["priceInputPerMTok"], cfg["priceOutputPerMTok"] = in, out
	e.As(wt.Admin).Must("PUT", "/api/admin/configurations/1", cfg, http.StatusOK)
}

// used is a model reply that ends a tour's turn with the usage given.
func used(in, out int) llmtest.Reply {
	return llmtest.Reply{Content: "Alles gut.", Usage: llm.Usage{PromptTokens: in, CompletionTokens: out}}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func campaignsMade(t *testing.T, db *store.DB) (campaigns, items int) {
	t.Helper()
	if err := db.QueryRow(t.Context(), "SELECT (SELECT COUNT(*) FROM campaigns), (SELECT COUNT(*) FROM campaign_items)").Scan(&campaigns, &items); err != nil {
		t.Fatal(err)
	}
	return campaigns, items
}

// A campaign with a budget, on a priced configuration, reads what its
// tours cost before it starts more pages: once they cost its budget it
// starts no further page, skips the pages left with the reason
// budget_reached and says so in its state, with what it spent; a resume
// is refused. Its tours cost 1000 input and 200 output tokens each, at
// 2.50 and 10.00 per million 0.0045: a budget of 0.008 lets two of the
// five pages run.
func TestACampaignWithABudgetStartsNoFurtherPageOnceItsToursCostIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, budgetSite, &wt.Options{Workers: 1, ChatWorkers: 2})
		price(t, e, 2.5, 10)
		for range 5 {
			e.LLM.Add(used(1000, 200))
		}
		erika := e.As(wt.Erika)
		v := wt.Decode[budgetCampaign](t, erika.Must("POST", "/api/campaigns", map[string]any{
			"process": "seo", "rootPage": 1, "depth": 1, "concurrency": 1, "budget": 0.008}, http.StatusCreated))
		if v.Counts.Total != 5 || v.Budget == nil || *v.Budget != 0.008 || v.Spent.Cost != 0 {
			t.Fatalf("created: %+v, want 5 pages, a budget of 0.008 and nothing spent", v)
		}
		untilCampaign(t, erika, v.ID, "budget_reached", func(c campaignView) bool { return c.State == "budget_reached" })
		v = wt.Decode[budgetCampaign](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d", v.ID), nil, http.StatusOK))
		if v.Counts.Done != 2 || v.Counts.Skipped != 3 || v.Counts.Pending+v.Counts.Running != 0 {
			t.Errorf("counts %+v, want 2 pages done and 3 skipped", v.Counts)
		}
		if v.Spent.PromptTokens != 2000 || v.Spent.CompletionTokens != 400 || !near(v.Spent.Cost, 0.009) {
			t.Errorf("spent %+v, want 2000 in, 400 out, 0.009", v.Spent)
		}
		skipped := 0
		for _, s := range itemRows(t, db, v.ID) {
			if s == "skipped budget_reached" {
				skipped++
			}
		}
		if skipped != 3 {
			t.Errorf("items %v, want 3 skipped with budget_reached", itemRows(t, db, v.ID))
		}
		if n := len(e.LLM.Requests()); n != 2 {
			t.Errorf("the model was asked %d times, want 2 (one per tour started)", n)
		}
		if a := erika.Do("POST", fmt.Sprintf("/api/campaigns/%d/resume", v.ID), nil); a.Status != http.StatusConflict || !strings.Contains(string(a.Body), "campaign_state") {
			t.Errorf("resume of a campaign at its budget = %d %s, want 409 campaign_state", a.Status, a.Body)
		}
	})
}

// A campaign without a budget on the same priced configuration runs all its
// pages: the budget stop is the budget's alone.
func TestACampaignWithoutABudgetRunsEveryPageWhateverItCosts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, budgetSite, &wt.Options{Workers: 1, ChatWorkers: 2})
		price(t, e, 2.5, 10)
		for range 5 {
			e.LLM.Add(used(1000, 200))
		}
		erika := e.As(wt.Erika)
		v := wt.Decode[budgetCampaign](t, erika.Must("POST", "/api/campaigns", map[string]any{
			"process": "seo", "rootPage": 1, "depth": 1, "concurrency": 2}, http.StatusCreated))
		untilCampaign(t, erika, v.ID, "done", func(c campaignView) bool { return c.State == "done" })
		v = wt.Decode[budgetCampaign](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d", v.ID), nil, http.StatusOK))
		if v.Counts.Done != 5 || v.Budget != nil || !near(v.Spent.Cost, 0.0225) {
			t.Errorf("campaign %+v, want 5 pages done, no budget, 0.0225 spent", v)
		}
	})
}

// The estimate before a start: the pages a campaign would cover × the mean
// tokens per tour of the process's earlier tours, priced with the
// configuration's prices; with no earlier tour the stated default; on a
// configuration without prices no cost. It starts nothing.
func TestACampaignEstimateTakesTheMeanOfTheProcesssEarlierToursOrTheDefault(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, budgetSite, nil)
		price(t, e, 2.5, 10)
		erika := e.As(wt.Erika)
		body := map[string]any{"process": "seo", "rootPage": 1, "depth": 1, "budget": 0.1}
		est := wt.Decode[campaignEstimate](t, erika.Must("POST", "/api/campaigns/estimate", body, http.StatusOK))
		// 5 × (30000 × 2.50 + 2000 × 10.00) / 1e6 = 0.475.
		if est.Pages != 5 || est.Basis != "default" || est.Tours != 0 || est.MeanTokensIn != 30000 || est.MeanTokensOut != 2000 ||
			est.TokensIn != 150000 || est.EstimatedCost == nil || !near(*est.EstimatedCost, 0.475) || !est.OverBudget {
			t.Errorf("estimate without earlier tours = %+v, want 5 pages on the default, 0.475, over the budget of 0.1", est)
		}
		// Two earlier tours of the process: 1000/200 and 3000/600 tokens.
		for _, u := range [][2]int{{1000, 200}, {3000, 600}} {
			e.LLM.Add(used(u[0], u[1]))
			conv := erika.Must("POST", "/api/conversations", map[string]any{"page": 2, "language": 0, "skill": 12}, http.StatusCreated).Map(t)
			erika.Must("POST", fmt.Sprintf("/api/conversations/%v/messages", conv["id"]), map[string]any{"content": "Los"}, http.StatusAccepted)
			e.App.Chat.Wait()
		}
		// A tour of no process does not count.
		e.LLM.Add(used(90000, 9000))
		plain := erika.Must("POST", "/api/conversations", map[string]any{"page": 2, "language": 0}, http.StatusCreated).Map(t)
		erika.Must("POST", fmt.Sprintf("/api/conversations/%v/messages", plain["id"]), map[string]any{"content": "Hallo"}, http.StatusAccepted)
		e.App.Chat.Wait()
		est = wt.Decode[campaignEstimate](t, erika.Must("POST", "/api/campaigns/estimate", body, http.StatusOK))
		// 5 × (2000 × 2.50 + 400 × 10.00) / 1e6 = 0.045.
		if est.Basis != "earlier_tours" || est.Tours != 2 || est.MeanTokensIn != 2000 || est.MeanTokensOut != 400 ||
			est.EstimatedCost == nil || !near(*est.EstimatedCost, 0.045) || est.OverBudget || est.Budget == nil || *est.Budget != 0.1 {
			t.Errorf("estimate after two tours = %+v, want their mean 2000/400, 0.045, within the budget", est)
		}
		price(t, e, 0, 0)
		est = wt.Decode[campaignEstimate](t, erika.Must("POST", "/api/campaigns/estimate", body, http.StatusOK))
		if est.EstimatedCost != nil || est.OverBudget || est.TokensIn != 10000 {
			t.Errorf("estimate on a configuration without prices = %+v, want no cost and 10000 tokens in", est)
		}
		if c, i := campaignsMade(t, db); c != 0 || i != 0 {
			t.Errorf("the estimates made %d campaigns and %d items, want none", c, i)
		}
	})
}

// A budget that is not a number of 0 or more is refused by the start and the
// estimate alike, and nothing is made; the estimate refuses what the start
// refuses (no page at all, a depth out of range).
func TestACampaignBudgetThatIsNotANumberOrNegativeIsRefusedAndMakesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, budgetSite, nil)
		erika := e.As(wt.Erika)
		for _, budget := range []any{"viel", -1, -0.001, true, map[string]any{"eur": 5}, []int{5}} {
			for _, path := range []string{"/api/campaigns", "/api/campaigns/estimate"} {
				a := erika.Do("POST", path, map[string]any{"process": "seo", "rootPage": 1, "depth": 1, "budget": budget})
				if a.Status != http.StatusBadRequest || !strings.Contains(string(a.Body), "budget") {
					t.Errorf("POST %s with budget %v = %d %s, want 400 naming the budget", path, budget, a.Status, a.Body)
				}
			}
		}
		if a := erika.Do("POST", "/api/campaigns/estimate", map[string]any{"process": "seo", "rootPage": 1, "depth": 11}); a.Status != http.StatusBadRequest {
			t.Errorf("estimate with depth 11 = %d, want 400", a.Status)
		}
		if a := erika.Do("POST", "/api/campaigns/estimate", map[string]any{"process": "nope", "rootPage": 1}); a.Status != http.StatusConflict || !strings.Contains(string(a.Body), "skill_unavailable") {
			t.Errorf("estimate of an unknown process = %d %s, want 409 skill_unavailable", a.Status, a.Body)
		}
		if c, i := campaignsMade(t, db); c != 0 || i != 0 {
			t.Errorf("refused requests made %d campaigns and %d items, want none", c, i)
		}
	})
}
