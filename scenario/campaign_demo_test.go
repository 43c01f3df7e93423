package scenario_test

import (
	"fmt"
	"net/http"
	"testing"

	"waymark/internal/demo"
	"waymark/internal/fixture"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// The demo's guide branch makes a campaign worth starting: the dashboard
// filter "description missing" finds half its pages, and the offline model
// answers each page's tour as it answers a tour started by hand — its first
// card proposes a description within the recommended range. A cancel skips
// the pages not started yet and leaves the cards of those that were.
func TestTheDemoGuideBranchHoldsACampaignTheOfflineModelAnswers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), &wt.Options{Workers: 2, ChatWorkers: 4})
		if _, err := fixture.Import(t.Context(), db, demo.Branch(demo.DefaultBranchPages), "branch.json", e.App.FixtureOptions()); err != nil {
			t.Fatal(err)
		}
		erika := e.As("demo-token-erika")
		v := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{
			"process": "seo-optimieren", "rootPage": demo.BranchRoot, "depth": 1, "filter": "descriptionMissing", "concurrency": 4}, http.StatusCreated))
		if v.Counts.Total != demo.DefaultBranchPages/2 {
			t.Fatalf("pages without a description: %d, want %d", v.Counts.Total, demo.DefaultBranchPages/2)
		}
		v = untilCampaign(t, erika, v.ID, "had four pages with proposals", func(v campaignView) bool { return v.Counts.Proposals >= 4 })
		if v.EstimatedSecondsLeft == nil {
			t.Errorf("no estimate while pages are left: %+v", v)
		}
		list := wt.Decode[campaignCards](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d/cards?field=description", v.ID), nil, http.StatusOK))
		if len(list.Cards) < 4 {
			t.Fatalf("description cards: %+v", list)
		}
		for _, c := range list.Cards {
			f := c.Fields[0]
			if c.Page <= demo.BranchRoot || f.Field != "description" || f.Current != "" || f.Measure == nil ||
				f.Measure.Count < f.Measure.Min || f.Measure.Count > f.Measure.Max {
				t.Errorf("card of page %d: %+v, want a description within its range", c.Page, f)
			}
		}
		got := wt.Decode[campaignView](t, erika.Must("POST", fmt.Sprintf("/api/campaigns/%d/cancel", v.ID), nil, http.StatusOK))
		if got.State != "cancelled" || got.Counts.Pending != 0 || got.Counts.Skipped == 0 {
			t.Errorf("cancelled: %+v", got)
		}
		after := wt.Decode[campaignCards](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d/cards?field=description", v.ID), nil, http.StatusOK))
		if after.Total < len(list.Cards) {
			t.Errorf("cards after the cancel: %d, want the %d drawn before", after.Total, len(list.Cards))
		}
	})
}
