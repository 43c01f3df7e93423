package scenario_test

import (
	"net/http"
	"testing"
	"time"

	"waymark/internal/demo"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// A campaign survives the death of the process working it: the process
// goes away mid-campaign with its campaign job lost and a page claimed but
// its tour never recorded (a crash between the claim and the start). A new
// process on the same database — its reaper hands the campaign to a new
// job, the claimed page is pending again after it went stale — finishes the
// campaign, and every page's tour was started exactly once, writing nothing.
func TestACampaignSurvivesItsProcessDyingAndStartsEveryPageOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), &wt.Options{Workers: 1, ChatWorkers: 2})
		erika := e.As("demo-token-erika")
		before := map[int64]string{}
		for _, p := range []int64{1, 2, 6, 7, 8} {
			before[p] = pageDescription(t, db, p)
		}
		v := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{
			"process": "seo-optimieren", "rootPage": 1, "depth": 2, "concurrency": 1}, http.StatusCreated))
		untilCampaign(t, erika, v.ID, "had a page worked", func(v campaignView) bool { return v.Counts.Proposals+v.Counts.Done >= 1 })
		e.StopWorkers()
		ctx := t.Context()
		for _, q := range []string{
			"DELETE FROM river_job WHERE kind = 'waymark_campaign'", // the job died with its process
			"UPDATE campaigns SET ticked_at = 1",                    // its lease is long lapsed
		} {
			if _, err := db.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		// A page claimed, its tour never recorded.
		var claimed int64
		if err := db.QueryRow(ctx, "SELECT MIN(id) FROM campaign_items WHERE campaign_id = ? AND state = 'pending'", v.ID).Scan(&claimed); err != nil || claimed == 0 {
			t.Fatalf("no pending page left to claim (%v): the campaign ran too fast for this test", err)
		}
		if _, err := db.Exec(ctx, "UPDATE campaign_items SET state = 'running', started_at = 1 WHERE id = ?", claimed); err != nil {
			t.Fatal(err)
		}
		// The next process on the database.
		e2 := wt.New(t, db, "", &wt.Options{Workers: 1, ChatWorkers: 2, Lease: 4 * time.Second})
		got := untilCampaign(t, e2.As("demo-token-erika"), v.ID, "done after the restart", func(v campaignView) bool { return v.State == "done" })
		if got.Counts.Skipped != 3 || got.Counts.Proposals+got.Counts.Done != 5 || got.Counts.Pending+got.Counts.Running != 0 {
			t.Errorf("after the restart: %+v, want 3 skipped and 5 worked", got.Counts)
		}
		rows, err := db.Query(ctx, "SELECT page_uid, COUNT(*) FROM conversations GROUP BY page_uid")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		pages := 0
		for rows.Next() {
			var page, n int64
			if err := rows.Scan(&page, &n); err != nil {
				t.Fatal(err)
			}
			pages++
			if n != 1 {
				t.Errorf("page %d has %d tours, want one", page, n)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if pages != 5 {
			t.Errorf("%d pages have a tour, want 5", pages)
		}
		for p, was := range before {
			if now := pageDescription(t, db, p); now != was {
				t.Errorf("page %d was written without an answer", p)
			}
		}
	})
}

// The owner's rights are read at each page's pickup, not at the campaign's
// start: a page she could edit when she started the campaign and may only
// read when its turn comes is skipped with page_read_only, and gets no tour.
func TestACampaignReadsTheOwnersRightsAtEachPickup(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		api := wt.New(t, db, string(demo.Fixture), &wt.Options{APIOnly: true}) // nothing is worked yet
		erika := api.As("demo-token-erika")
		v := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{"process": "seo-optimieren", "rootPage": 2}, http.StatusCreated))
		if v.Counts.Total != 1 {
			t.Fatalf("created: %+v", v.Counts)
		}
		// Page 2 moves to the Services group: erika may show it, not edit it.
		if _, err := db.Exec(t.Context(), "UPDATE records SET group_uid = 2 WHERE tbl = 'pages' AND uid = 2"); err != nil {
			t.Fatal(err)
		}
		wt.New(t, db, "", &wt.Options{Workers: 1, ChatWorkers: 2}) // a worker process
		untilCampaign(t, erika, v.ID, "done", func(v campaignView) bool { return v.State == "done" })
		if got := itemRows(t, db, v.ID)[2]; got != "skipped page_read_only" {
			t.Errorf("page 2: %q, want skipped page_read_only", got)
		}
		var n int
		if err := db.QueryRow(t.Context(), "SELECT COUNT(*) FROM conversations").Scan(&n); err != nil || n != 0 {
			t.Errorf("tours: %d, %v; want none", n, err)
		}
	})
}
