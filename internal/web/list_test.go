package web_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// listKinds are the states a conversation list tells apart, as seeded by
// seedConversations (index i%len), with what the German list says of each.
var listKinds = []struct {
	status, progress, lastNotice string
	process                      bool
	skill                        int64
	says                         string
}{
	{"idle", `{"current": 4, "total": 4, "completed": true}`, "", true, 12, "abgeschlossen"},
	{"idle", "", "tour_ended", false, 12, "beendet"},
	{"failed", `{"current": 1, "total": 4}`, "", true, 12, "unterbrochen"},
	{"idle", "", "", false, 0, "bereit"},
	{"idle", `{"current": 2, "total": 4}`, "", true, 12, "bereit"},
	{"idle", "", "stopped", false, 12, "bereit"},
	{"awaiting_input", "", "", true, 12, "wartet auf deine Antwort"},
}

// seedConversations stores n conversations of erika (uid 2) on page 2,
// cycling through listKinds, each with msgs messages and three outcomes.
func seedConversations(tb testing.TB, db *store.DB, n, msgs int) {
	tb.Helper()
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for i := range n {
			k := listKinds[i%len(listKinds)]
			var id int64
			if err := tx.QueryRow(ctx, `INSERT INTO conversations (owner_uid, configuration_uid, page_uid, language, skill_uid, process,
				status, progress, created_at, updated_at) VALUES (2, 1, 2, 0, ?, ?, ?, ?, ?, ?) RETURNING id`,
				k.skill, k.process, k.status, k.progress, i, i).Scan(&id); err != nil {
				return err
			}
			for j := range msgs {
				role, notice := []string{"user", "assistant"}[j%2], ""
				if j == msgs-1 {
					notice = k.lastNotice
				}
				if _, err := tx.Exec(ctx, `INSERT INTO conversation_messages (conversation_id, role, content, notice, created_at)
					VALUES (?, ?, ?, ?, ?)`, id, role, fmt.Sprintf("Nachricht %d", j), notice, j); err != nil {
					return err
				}
			}
			for j, o := range []string{"applied", "skipped", "kept"} {
				if _, err := tx.Exec(ctx, `INSERT INTO conversation_outcomes (conversation_id, run_uuid, outcome, after_message, tbl, uid, fields, created_at)
					VALUES (?, ?, ?, ?, 'pages', 2, '["description"]', ?)`, id, fmt.Sprintf("run-%d-%d", i, j), o, j, j); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

var listEntry = regexp.MustCompile(`<a href="/chat/(\d+)"[^>]*>\s*<span class="title">[^<]*</span>\s*<span class="meta">[^<]*· ([^<·]+)</span>`)

// The conversation list says of each conversation what its header says —
// completed, ended by the editor, interrupted, ready, waiting — read from
// the conversations without their transcripts.
func TestTheConversationListSaysEachStateWithoutReadingTranscripts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		seedConversations(t, db, len(listKinds), 3)
		b := login(t, e, "erika", "erika-pass-1234")
		page := b.get("/chat")
		got := map[string]string{}
		for _, m := range listEntry.FindAllStringSubmatch(page.Body, -1) {
			got[m[1]] = m[2]
		}
		if len(got) != len(listKinds) {
			t.Fatalf("the list shows %d conversations, want %d:\n%s", len(got), len(listKinds), page.Body)
		}
		for i, k := range listKinds {
			if says := got[fmt.Sprint(i+1)]; says != k.says {
				t.Errorf("conversation %d (%s, process %v, last notice %q) reads %q, want %q", i+1, k.status, k.process, k.lastNotice, says, k.says)
			}
		}
	})
}

// BenchmarkConversationList measures the list of 200 conversations (30
// messages and 3 outcomes each) read as items, which the chat page shows,
// beside the whole views the list was built from before, in the same run.
func BenchmarkConversationList(b *testing.B) {
	db := storetest.SQLite(b)
	e := wt.New(b, db, site, nil)
	seedConversations(b, db, 200, 30)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		read func() (int, error)
	}{
		{"views", func() (int, error) { l, err := e.App.Chat.List(ctx, 2); return len(l), err }},
		{"items", func() (int, error) { l, err := e.App.Chat.Items(ctx, 2); return len(l), err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				if n, err := c.read(); err != nil || n != 200 {
					b.Fatalf("%d conversations, %v", n, err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/list")
		})
	}
	br := login(b, e, "erika", "erika-pass-1234")
	b.Run("chat-page", func(b *testing.B) {
		for b.Loop() {
			if a := br.get("/chat"); a.Status != http.StatusOK {
				b.Fatalf("status %d", a.Status)
			}
		}
	})
}
