package scale_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"waymark/internal/demo"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// A page of a campaign's review list costs the same statements whether the
// campaign waits on one card or on several: the list reads the cards of the
// page asked for, not every card of the campaign (BenchmarkCampaign1000Pages
// measures it at 1,000 cards).
func TestAPageOfTheReviewListCostsTheSameStatementsForOneCardAsForMany(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), &wt.Options{Workers: 2, ChatWorkers: 4})
		erika := e.As("demo-token-erika")
		campaign := func(root int64, depth int) int64 {
			v := wt.Decode[struct{ ID int64 }](t, erika.Must("POST", "/api/campaigns", map[string]any{
				"process": "seo-optimieren", "rootPage": root, "depth": depth, "languages": []int64{0}, "concurrency": 4}, http.StatusCreated))
			deadline := time.Now().Add(60 * time.Second)
			for {
				var left int
				if err := db.SQL.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM campaign_items WHERE campaign_id = $1 AND state IN ('pending', 'running')", v.ID).Scan(&left); err != nil {
					t.Fatal(err)
				}
				if left == 0 {
					return v.ID
				}
				if time.Now().After(deadline) {
					t.Fatalf("campaign %d: %d pages left after 60 s", v.ID, left)
				}
				time.Sleep(20 * time.Millisecond) // polling the running application's rows
			}
		}
		// listPage reads the first card of campaign id's list (twice: the
		// first read may fill the settings cache) and returns the
		// statements of the second read and the total it names.
		listPage := func(id int64) (int64, int) {
			var used int64
			var page struct {
				Cards []json.RawMessage
				Total int
			}
			for range 2 {
				before := db.Statements()
				r := erika.Must("GET", fmt.Sprintf("/api/campaigns/%d/cards?limit=1", id), nil, http.StatusOK)
				used = db.Statements() - before
				if err := json.Unmarshal(r.Body, &page); err != nil || len(page.Cards) != 1 {
					t.Fatalf("list of campaign %d: %s", id, r.Body)
				}
			}
			return used, page.Total
		}
		one, many := campaign(7, 0), campaign(1, 2)
		usedOne, totalOne := listPage(one)
		usedMany, totalMany := listPage(many)
		if totalOne != 1 || totalMany < 3 {
			t.Fatalf("cards: %d and %d, want 1 and at least 3", totalOne, totalMany)
		}
		t.Logf("a list page of a campaign of 1 card: %d statements; of %d cards: %d", usedOne, totalMany, usedMany)
		if usedMany > usedOne {
			t.Errorf("a list page of %d cards took %d statements, of 1 card %d: want no more", totalMany, usedMany, usedOne)
		}
	})
}
