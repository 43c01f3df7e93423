package campaign

import (
	"context"
	"sync"
	"testing"

	"waymark/internal/chat"
	"waymark/internal/llmconfig"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// busyChat starts tours that never reach a card: every started item stays
// running, so the limits alone decide how many run.
type busyChat struct {
	mu      sync.Mutex // guards started
	started map[int64]int
}

func (c *busyChat) Start(_ context.Context, _, page, language, _, _ int64) (chat.View, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started[page]++
	return chat.View{ID: page*10 + language, Status: chat.Processing, Messages: []chat.Message{{Role: "user"}}}, nil
}
func (c *busyChat) Send(context.Context, int64, int64, string) error { return nil }
func (c *busyChat) Get(_ context.Context, _, id int64) (chat.View, error) {
	return chat.View{ID: id, Status: chat.Processing, Messages: []chat.Message{{Role: "user"}}}, nil
}
func (c *busyChat) AnswerWith(context.Context, int64, int64, string, string, chat.AnswerOptions) error {
	return nil
}
func (c *busyChat) ConfigurationFor(context.Context, int64) (llmconfig.Configuration, error) {
	return llmconfig.Configuration{}, nil
}

func addItems(t *testing.T, db *store.DB, id int64, pages int) {
	t.Helper()
	for p := 1; p <= pages; p++ {
		if _, err := db.Exec(context.Background(), "INSERT INTO campaign_items (campaign_id, position, page_uid, language, state) VALUES (?, ?, ?, 0, 'pending')",
			id, p, id*100+int64(p)); err != nil {
			t.Fatal(err)
		}
	}
}

func running(t *testing.T, db *store.DB, id int64) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM campaign_items WHERE campaign_id = ? AND state = 'running'", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A campaign runs at most its concurrency of tours at once, and all
// campaigns together at most the installation's limit; a tour that ended
// frees its place. Each page's tour is started once however often the
// campaign is worked.
func TestCampaignsRunWithinTheirConcurrencyAndTheInstallationsLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := &busyChat{started: map[int64]int{}}
		s := New(Deps{DB: db, Chat: c}, &Config{Limit: 5})
		a, b := newCampaignRow(t, db, Running), newCampaignRow(t, db, Running)
		if _, err := db.Exec(context.Background(), "UPDATE campaigns SET concurrency = 3"); err != nil {
			t.Fatal(err)
		}
		addItems(t, db, a, 6)
		addItems(t, db, b, 6)
		for range 3 { // worked again and again: no place frees
			for _, id := range []int64{a, b} {
				r, err := getRow(context.Background(), db, id)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.step(context.Background(), r); err != nil {
					t.Fatal(err)
				}
			}
		}
		if ra, rb := running(t, db, a), running(t, db, b); ra != 3 || rb != 2 {
			t.Errorf("running: %d and %d, want 3 (its concurrency) and 2 (the installation's 5 less 3)", ra, rb)
		}
		for page, n := range c.started {
			if n != 1 {
				t.Errorf("page %d started %d times", page, n)
			}
		}
		if len(c.started) != 5 {
			t.Errorf("%d tours started, want 5", len(c.started))
		}
	})
}
