package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

var campaignPath = regexp.MustCompile(`^/campaigns/(\d+)$`)

func campaignCount(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(t.Context(), "SELECT COUNT(*) FROM campaigns").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func campaignForm(process, root, depth, budget string) url.Values {
	return url.Values{"process": {process}, "rootPage": {root}, "depth": {depth}, "filter": {""}, "language": {"0"},
		"concurrency": {"1"}, "budget": {budget}}
}

// The dashboard's form starts a campaign through the campaign service and
// leads to its page; the page, its progress, its changes and its answers
// are its owner's: another user gets 404 for each, as for an unknown one.
func TestCampaignFormStartsACampaignWhosePageIsItsOwnersOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(say("Alles gut."), say("Alles gut."))
		erika := login(t, e, "erika", "erika-pass-1234")
		dash := erika.get("/dashboard")
		contains(t, "dashboard", dash, `id="campaign-form"`, `hx-post="/campaigns"`, `name="rootPage"`, `href="/campaigns"`)
		a := erika.post("/campaigns", campaignForm(seo, "1", "0", "2.5"))
		to := a.Header.Get("HX-Redirect")
		if !campaignPath.MatchString(to) {
			t.Fatalf("POST /campaigns = %d, HX-Redirect %q: %s", a.Status, to, a.Body)
		}
		page := erika.get(to)
		if page.Status != http.StatusOK {
			t.Fatalf("GET %s = %d", to, page.Status)
		}
		contains(t, "campaign page", page, `id="campaign-progress"`, `hx-post="`+to+`/pause"`, `id="review"`, `<progress`)
		if list := erika.get("/campaigns"); !strings.Contains(list.Body, `href="`+to+`"`) {
			t.Errorf("the campaigns list does not link %s", to)
		}
		paula := login(t, e, "paula", "paula-pass-1234")
		for _, c := range []struct{ method, path string }{{"GET", to}, {"GET", to + "/progress"}, {"POST", to + "/pause"},
			{"POST", to + "/cancel"}, {"POST", to + "/answers"}, {"GET", "/campaigns/999999"}} {
			var got answer
			if c.method == "GET" {
				got = paula.get(c.path)
			} else {
				got = paula.post(c.path, url.Values{"answer": {"apply"}, "card": {"1|v1:00"}})
			}
			if got.Status != http.StatusNotFound {
				t.Errorf("paula %s %s = %d, want 404", c.method, c.path, got.Status)
			}
		}
		if list := paula.get("/campaigns"); strings.Contains(list.Body, `href="`+to+`"`) {
			t.Errorf("paula's campaigns list shows erika's campaign")
		}
		// A cancel by its owner is taken; a second is refused and named.
		contains(t, "cancel", erika.post(to+"/cancel", nil), `data-state="cancelled"`)
		again := erika.post(to+"/cancel", nil)
		contains(t, "second cancel", again, `class="error"`, `disabled aria-describedby="why-cancel"`)
	})
}

// Bad input in the dashboard's form is shown in the form, in the editor's
// language, and starts no campaign.
func TestCampaignFormShowsBadInputAndStartsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		erika := login(t, e, "erika", "erika-pass-1234")
		for _, c := range []struct {
			name string
			form url.Values
			want string
		}{
			{"depth out of range", campaignForm(seo, "1", "11", ""), "depth"},
			{"budget not a number", campaignForm(seo, "1", "0", "viel"), "Budget"},
			{"root page not a number", campaignForm(seo, "eins", "0", ""), "Startseite"},
			{"unknown process", campaignForm("no-such-process", "1", "0", ""), `role="alert"`},
			{"unknown page", campaignForm(seo, "987654", "0", ""), `role="alert"`},
			{"neither page nor filter", campaignForm(seo, "", "0", ""), `role="alert"`},
		} {
			a := erika.post("/campaigns", c.form)
			if a.Header.Get("HX-Redirect") != "" {
				t.Errorf("%s: started (redirect %q)", c.name, a.Header.Get("HX-Redirect"))
				continue
			}
			contains(t, c.name, a, `id="campaign-form"`, `role="alert"`, c.want)
		}
		if n := campaignCount(t, db); n != 0 {
			t.Errorf("%d campaigns made by refused forms", n)
		}
		// The form speaks the editor's language: erika's is German.
		a := erika.post("/campaigns", campaignForm(seo, "1", "0", "viel"))
		contains(t, "german", a, "„Budget“ muss eine Zahl sein. Es wurde keine Kampagne gestartet.")
	})
}

// The review list shows a campaign's waiting card with its word diff; the
// card's own answer is taken, and a bulk answer naming a card whose digest
// changed since the list was drawn names it refused.
func TestCampaignReviewListAnswersCardsAndNamesAStaleOne(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, site, &wt.Options{Workers: 1, ChatWorkers: 1})
		e.LLM.Add(write("c1", `{"description": "Eine neue Beschreibung der Startseite."}`), say("Erledigt."))
		erika := login(t, e, "erika", "erika-pass-1234")
		to := erika.post("/campaigns", campaignForm(seo, "1", "0", "")).Header.Get("HX-Redirect")
		if !campaignPath.MatchString(to) {
			t.Fatalf("no campaign started: %q", to)
		}
		var page answer
		for deadline := time.Now().Add(30 * time.Second); ; {
			page = erika.get(to)
			if strings.Contains(page.Body, `name="card"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no card in the review list after 30 s:\n%s", page.Body)
			}
			time.Sleep(100 * time.Millisecond) // polling the running application's campaign
		}
		contains(t, "review list", page, "<ins>", `name="one" value="apply|`, "Im Chat fortsetzen",
			"Vorschlagsliste aktualisieren (1 Seite mit Vorschlägen)")
		ref := regexp.MustCompile(`name="card" value="([^"]+)"`).FindStringSubmatch(page.Body)[1]
		conv, _, _ := strings.Cut(ref, "|")
		stale := erika.post(to+"/answers", url.Values{"answer": {"skip"}, "card": {conv + "|v1:stale"}})
		contains(t, "stale", stale, `class="refused"`, "abgelehnt")
		applied := erika.post(to+"/answers", url.Values{"one": {"apply|" + ref}})
		contains(t, "apply", applied, `class="answered"`, "übernommen")
		none := erika.post(to+"/answers", url.Values{"answer": {"apply"}})
		contains(t, "nothing selected", none, `role="alert"`, "Wähle mindestens einen Vorschlag aus.")
	})
}

// A paused campaign does not say its pages are being worked: the time its
// pages left would take is named as the time after the resume ("noch etwa"
// is for a campaign that runs).
func TestAPausedCampaignNamesItsTimeLeftAsTheTimeAfterTheResume(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		arrived, hold := make(chan struct{}), make(chan struct{})
		e.LLM.Add(say("Alles gut."), llmtest.Reply{Content: "Alles gut.", Arrived: arrived, Hold: hold})
		defer close(hold)
		erika := login(t, e, "erika", "erika-pass-1234")
		to := erika.post("/campaigns", campaignForm(seo, "1", "1", "")).Header.Get("HX-Redirect")
		if !campaignPath.MatchString(to) {
			t.Fatalf("the start led to %q", to)
		}
		select {
		case <-arrived: // the first page is worked, the second's tour under way
		case <-time.After(30 * time.Second):
			t.Fatal("the second page's tour never asked the model")
		}
		running := erika.get(to + "/progress")
		contains(t, "running", running, `data-state="running"`, "noch etwa 1 min")
		paused := erika.post(to+"/pause", nil)
		contains(t, "paused", paused, `data-state="paused"`, "<strong>pausiert</strong> · nach dem Fortsetzen noch etwa 1 min")
		if strings.Contains(paused.Body, "· noch etwa") {
			t.Errorf("the paused campaign says it is being worked: %s", paused.Body)
		}
	})
}
