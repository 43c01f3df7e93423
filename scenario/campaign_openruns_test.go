package scenario_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"waymark/internal/demo"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// Every tour waiting at its card holds one of its owner's open runs. A
// campaign over more pages than her cap allows starts pages only while she
// has room below it (a tenth of it, at least one, kept for her own chats):
// the pages beyond wait — they are not failed at the cap — and the
// campaign says it waits for answers; once she ends tours, it goes on and
// works every page. With a cap of 4, three tours may wait at once.
func TestACampaignLargerThanItsOwnersOpenRunsWaitsForAnswersInsteadOfFailingPages(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), &wt.Options{Workers: 2, ChatWorkers: 4, MaxOpenRuns: 4})
		erika := e.As("demo-token-erika")
		v := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{
			"process": "seo-optimieren", "rootPage": 1, "depth": 2, "languages": []int64{0}, "concurrency": 8}, http.StatusCreated))
		// Three pages of hers are read only (skipped); five are worked.
		v = untilCampaign(t, erika, v.ID, "waiting for answers", func(v campaignView) bool {
			return v.Counts.Proposals == 3 && v.Counts.Pending == 2 && v.WaitsForAnswers
		})
		if v.Counts.Failed != 0 || v.State != "running" {
			t.Fatalf("at the cap: %+v, want running with no failed page", v)
		}
		// The pages beyond stay pending however long she waits: the job
		// keeps looking, and starts none while no run is free.
		for range 3 {
			v = wt.Decode[campaignView](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d", v.ID), nil, http.StatusOK))
			if v.Counts.Proposals != 3 || v.Counts.Pending != 2 || v.Counts.Failed != 0 {
				t.Fatalf("while waiting: %+v, want 3 with proposals and 2 pending", v.Counts)
			}
		}
		// She ends the waiting tours; each frees its run, and the campaign
		// starts the pages left, until every page is worked. The campaign is
		// done once no page is pending or running — its last tour may then
		// still wait at its card, so she ends that one too.
		ended := map[int64]bool{}
		deadline := time.Now().Add(60 * time.Second)
		for {
			list := wt.Decode[campaignCards](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d/cards", v.ID), nil, http.StatusOK))
			for _, c := range list.Cards {
				if !ended[c.Conversation] {
					ended[c.Conversation] = true
					erika.Must("POST", fmt.Sprintf("/api/conversations/%d/end-tour", c.Conversation), map[string]any{}, http.StatusOK)
				}
			}
			v = wt.Decode[campaignView](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d", v.ID), nil, http.StatusOK))
			if v.State == "done" && v.Counts.Proposals == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tours still waiting after %d ended: %+v", len(ended), v)
			}
			v = untilCampaign(t, erika, v.ID, "on with the pages left", func(c campaignView) bool {
				return c.State == "done" || c.Counts.Proposals > 0 && len(ended) < 5
			})
		}
		if v.Counts.Failed != 0 || v.Counts.Skipped != 3 || v.Counts.Done != 5 || v.WaitsForAnswers {
			t.Fatalf("done: %+v, want 5 pages done, 3 skipped, none failed", v)
		}
		if len(ended) != 5 {
			t.Errorf("%d tours ended, want the 5 pages' tours", len(ended))
		}
	})
}
