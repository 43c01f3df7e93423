package web_test

import (
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// namedSite is site with the process's names in both UI languages, the
// German one other than the SKILL.md's name.
var namedSite = strings.Replace(site, "    identifier: seo\n", "    identifier: seo\n    names: {en: Optimise SEO, de: SEO prüfen}\n", 1)

// A process is named in the reader's UI language: an editor whose UI is
// English sees its English name in the picker, the slash menu, the tour
// header and the conversation list; one whose UI is German sees the German
// name — never the other's; so do the campaign form and a campaign's page.
func TestAProcessIsNamedInTheReadersUILanguage(t *testing.T) {
	if namedSite == site {
		t.Fatal("the fixture has no skill entry to name")
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, namedSite, nil)
		for _, c := range []struct {
			user, password, want, other string
		}{
			{"paula", "paula-pass-1234", "Optimise SEO", "SEO prüfen"},
			{"erika", "erika-pass-1234", "SEO prüfen", "Optimise SEO"},
		} {
			b := login(t, e, c.user, c.password)
			picker := b.get("/chat?page=1&language=0&skill=12")
			contains(t, c.user+"'s picker", picker, `<option value="12" selected>`+c.want+`</option>`)
			lacks(t, c.user+"'s picker", picker, c.other, "SEO optimieren")
			e.LLM.Add(say("Los geht's."))
			path := startTour(t, b, "1", "0", seo)
			e.App.Chat.Wait()
			conv := b.get(path)
			contains(t, c.user+"'s tour", conv, c.want)
			lacks(t, c.user+"'s tour", conv, c.other, "SEO optimieren")

			dash := b.get("/dashboard")
			contains(t, c.user+"'s campaign form", dash, `<option value="seo">`+c.want+`</option>`)
			lacks(t, c.user+"'s campaign form", dash, c.other, "SEO optimieren")
			e.LLM.Add(say("Alles gut."))
			a := b.post("/campaigns", campaignForm(seo, "1", "0", ""))
			to := a.Header.Get("HX-Redirect")
			if to == "" {
				t.Fatalf("%s: POST /campaigns = %d: %s", c.user, a.Status, a.Body)
			}
			camp := b.get(to)
			contains(t, c.user+"'s campaign", camp, c.want)
			lacks(t, c.user+"'s campaign", camp, c.other, "SEO optimieren")
			e.App.Chat.Wait()
		}
	})
}
