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

// A process that dies after a page's tour was made and before the campaign
// recorded it leaves the tour's conversation behind: the next process records
// that conversation as the page's tour and begins it — at once, not after the
// claim went stale — so the page gets one tour, not a second beside an empty
// first. A conversation of another page or process is not taken.
func TestACampaignTakesTheTourItsDeadProcessMadeButNeverRecorded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		api := wt.New(t, db, string(demo.Fixture), &wt.Options{APIOnly: true}) // nothing is worked yet
		erika := api.As("demo-token-erika")
		v := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{"process": "seo-optimieren", "rootPage": 2}, http.StatusCreated))
		var cfg, skill int64
		if err := db.QueryRow(ctx, "SELECT configuration_uid, skill_uid FROM campaigns WHERE id = ?", v.ID).Scan(&cfg, &skill); err != nil {
			t.Fatal(err)
		}
		// The dead process claimed page 2 and started its tour, and died
		// before recording it; erika meanwhile opened a chat of page 2
		// without the process, and one of page 6 with it.
		claimed := time.Now().Add(-time.Second).UnixMicro()
		if _, err := db.Exec(ctx, "UPDATE campaign_items SET state = 'running', started_at = ? WHERE campaign_id = ?", claimed, v.ID); err != nil {
			t.Fatal(err)
		}
		orphan, err := api.App.Chat.Start(ctx, erikaUID, 2, 0, skill, cfg)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := api.App.Chat.Start(ctx, erikaUID, 2, 0, 0, cfg)
		if err != nil {
			t.Fatal(err)
		}
		other, err := api.App.Chat.Start(ctx, erikaUID, 6, 0, skill, cfg)
		if err != nil {
			t.Fatal(err)
		}
		wt.New(t, db, "", &wt.Options{Workers: 1, ChatWorkers: 2}) // the next process
		got := untilCampaign(t, erika, v.ID, "done", func(v campaignView) bool { return v.State == "done" })
		if got.Counts.Proposals+got.Counts.Done != 1 {
			t.Fatalf("after the restart: %+v, want page 2 worked", got.Counts)
		}
		var conv int64
		if err := db.QueryRow(ctx, "SELECT conversation_id FROM campaign_items WHERE campaign_id = ?", v.ID).Scan(&conv); err != nil || conv != orphan.ID {
			t.Errorf("page 2's tour: conversation %d (%v), want the one its dead process made (%d)", conv, err, orphan.ID)
		}
		for _, c := range []struct {
			id   int64
			want int
		}{{orphan.ID, 1}, {plain.ID, 0}, {other.ID, 0}} {
			var n int
			if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM conversation_messages WHERE conversation_id = ? AND role = 'user'", c.id).Scan(&n); err != nil || n != c.want {
				t.Errorf("conversation %d: %d first messages (%v), want %d", c.id, n, err, c.want)
			}
		}
		var n int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM conversations").Scan(&n); err != nil || n != 3 {
			t.Errorf("conversations: %d (%v), want the three made before the restart and no other", n, err)
		}
	})
}
