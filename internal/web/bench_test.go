package web_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// BenchmarkChatPageWith200Messages measures the chat page's server time with
// 200 messages in the conversation (under 50 ms).
func BenchmarkChatPageWith200Messages(b *testing.B) {
	db := storetest.SQLite(b)
	e := wt.New(b, db, site, nil)
	c := e.As(wt.Erika).Must("POST", "/api/conversations", map[string]any{"page": 1, "language": 0}, http.StatusCreated).Map(b)
	id := int64(c["id"].(float64))
	for i := 0; i < 200; i++ {
		role := []string{"user", "assistant"}[i%2]
		if _, err := db.Exec(b.Context(), `INSERT INTO conversation_messages (conversation_id, role, content, notice, created_at)
			VALUES (?, ?, ?, '', ?)`, id, role, fmt.Sprintf("Nachricht **%d** mit etwas Text, einer [Verknüpfung](https://example.org) und `Code`.", i), i); err != nil {
			b.Fatal(err)
		}
	}
	br := login(b, e, "erika", "erika-pass-1234")
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if a := br.get(fmt.Sprintf("/chat/%d", id)); a.Status != http.StatusOK {
			b.Fatalf("status %d", a.Status)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/page")
}
