package web_test

import (
	"net/url"
	"strings"
	"testing"

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
