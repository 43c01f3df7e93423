package web_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/openpoint"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Screen 6: a skipped card becomes an open point on the dashboard, a link
// that opens the picker on its page, language and process; the page ranks
// first under "Eine Seite verbessern"; the recent conversations are listed.
func TestDashboardListsTheSkippedPointAndStartsItsProcessAgain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "Eine Beschreibung."}`), say("Gut, dann nicht."))
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", seo)
		b.post(path+"/answer", url.Values{"turnDigest": {turnDigest(t, b.get(path))}, "answer": {"skip"}})
		e.App.Chat.Wait()
		contains(t, "status line", b.get(path+"/view"), "Übersprungen: Seite „Home“ – Beschreibung")
		d := b.get("/dashboard")
		link := `<a href="/chat?page=1&amp;language=0&amp;skill=12">Beschreibung fehlt auf „Home“</a>`
		contains(t, "dashboard", d, "Offene Punkte", link, "SEO optimieren", "Eine Seite verbessern", "1 offener Punkt",
			"Letzte Unterhaltungen", `href="`+path+`"`)
		improve := d.Body[strings.Index(d.Body, "Eine Seite verbessern"):]
		if first := strings.Index(improve, `<a href="/chat?page=`); first < 0 || !strings.HasPrefix(improve[first:], `<a href="/chat?page=1&amp;language=0&amp;skill=12">Home</a>`) {
			t.Errorf("the page with the open point is not ranked first:\n%s", improve)
		}
		picker := b.get("/chat?page=1&language=0&skill=12")
		contains(t, "picker from the link", picker, `value="1" checked`, `<option value="12" selected>SEO optimieren</option>`)
	})
}

// The end of a tour names the dashboard's first suggestion other than the
// page just finished: one ranking for both. Two older open points on the
// German home page outrank one newer point on About; before, the tour's
// end named the page of the newest point (About) while the dashboard put
// the German home page first.
func TestTheTourEndNamesTheDashboardsFirstSuggestion(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ctx := t.Context()
		const skill = 12
		points := openpoint.New(e.DB, nil, nil, nil)
		if err := points.RecordSkip(ctx, skill, 1, openpoint.Target{Table: "tt_content", UID: 101, Fields: []string{"header", "bodytext"}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // the point on About is the newest
		if err := points.RecordSkip(ctx, skill, 2, openpoint.Target{Table: "pages", UID: 2, Fields: []string{"description"}}); err != nil {
			t.Fatal(err)
		}
		e.LLM.Add(
			write("c1", `{"description": "Neu und gut."}`),
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p1", Name: "set_progress", Arguments: `{"current": 1, "total": 1, "completed": true}`}}},
			say("Fertig."))
		b := login(t, e, "erika", "erika-pass-1234")
		home := startTour(t, b, "1", "0", seo)
		b.post(home+"/answer", url.Values{"turnDigest": {turnDigest(t, b.get(home))}, "answer": {"apply"}})
		e.App.Chat.Wait()
		done := b.get(home)
		next := regexp.MustCompile(`<a href="(/chat\?page=[^"]+)">Nächste Seite mit offenen Punkten: ([^<]+)</a>`).FindStringSubmatch(done.Body)
		if next == nil {
			t.Fatalf("the tour's end names no next page with open points:\n%s", done.Body)
		}

		d := b.get("/dashboard")
		improve := d.Body[strings.Index(d.Body, "Eine Seite verbessern"):]
		var first string
		for _, m := range regexp.MustCompile(`<a href="(/chat\?page=[^"]+)">`).FindAllStringSubmatch(improve, -1) {
			if !strings.HasPrefix(m[1], "/chat?page=1&amp;language=0&") { // the page just finished
				first = m[1]
				break
			}
		}
		if next[1] != first {
			t.Errorf("the tour's end names %s (%s), the dashboard's first other suggestion is %s", next[1], next[2], first)
		}
		if want := "/chat?page=1&amp;language=1&amp;skill=12"; next[1] != want {
			t.Errorf("the tour's end names %s (%s), want the German home page with two points, %s", next[1], next[2], want)
		}
	})
}

// Without open points the end of a tour still names the dashboard's first
// other suggestion, saying it is a page to improve (its SEO gaps), not one
// with open points.
func TestTheTourEndNamesAPageToImproveWithoutOpenPoints(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(
			write("c1", `{"description": "Neu und gut."}`),
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p1", Name: "set_progress", Arguments: `{"current": 1, "total": 1, "completed": true}`}}},
			say("Fertig."))
		b := login(t, e, "erika", "erika-pass-1234")
		home := startTour(t, b, "1", "0", seo)
		b.post(home+"/answer", url.Values{"turnDigest": {turnDigest(t, b.get(home))}, "answer": {"apply"}})
		e.App.Chat.Wait()
		done := b.get(home)
		contains(t, "tour done", done, `">Nächste Seite zum Verbessern: `)
		lacks(t, "tour done", done, "Nächste Seite mit offenen Punkten")
		next := regexp.MustCompile(`<a href="(/chat\?page=[^"]+)">Nächste Seite zum Verbessern`).FindStringSubmatch(done.Body)
		improve := b.get("/dashboard").Body
		improve = improve[strings.Index(improve, "Eine Seite verbessern"):]
		for _, m := range regexp.MustCompile(`<a href="(/chat\?page=[^"]+)">`).FindAllStringSubmatch(improve, -1) {
			if !strings.HasPrefix(m[1], "/chat?page=1&amp;language=0&") {
				if next == nil || next[1] != m[1] {
					t.Errorf("the tour's end names %v, the dashboard's first other suggestion is %s", next, m[1])
				}
				break
			}
		}
	})
}
