package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// systemPrompt is the system message of the i-th request the model server
// received.
func systemPrompt(t *testing.T, e *wt.Env, i int) string {
	t.Helper()
	reqs := e.LLM.Requests()
	if len(reqs) <= i {
		t.Fatalf("the model received %d requests, want more than %d", len(reqs), i)
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[i].Body, &body); err != nil {
		t.Fatal(err)
	}
	var sys []string
	for _, m := range body.Messages {
		if m.Role == "system" {
			sys = append(sys, m.Content)
		}
	}
	return strings.Join(sys, "\n")
}

// Every chat has its page, in the editor's language: a free chat and a four-eyes chat tell the model
// the conversation's page — its title in the conversation's language, its
// uid and its language — in every turn, so the model need not ask which
// page is meant.
func TestEveryTurnNamesItsPageAndTheEditorsLanguage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(say("Gern."), say("Noch etwas?"), say("Gern, vier Augen."))
		erika := e.As(wt.Erika)
		for i, tc := range []struct {
			cfg   int64
			turns int
		}{{1, 2}, {2, 1}} {
			conv := erika.Must("POST", "/api/conversations", map[string]any{"page": 1, "language": 1, "configuration": tc.cfg}, http.StatusCreated).Map(t)
			id := fmt.Sprint(conv["id"])
			for range tc.turns {
				before := len(e.LLM.Requests())
				erika.Must("POST", "/api/conversations/"+id+"/messages", map[string]any{"content": "Mach die Beschreibung besser."}, http.StatusAccepted)
				e.App.Chat.Wait()
				sys := systemPrompt(t, e, before)
				for _, want := range []string{`"Startseite"`, "table pages, uid 1", "Deutsch, language uid 1", "do not ask the editor which page", "The editor reads German", "closing summary of a tour in German"} {
					if !strings.Contains(sys, want) {
						t.Errorf("conversation %d (configuration %d), request %d: system prompt lacks %q:\n%s", i, tc.cfg, before, want, sys)
					}
				}
			}
		}
	})
}

// The inbox means "needs you": an approver's inbox lists the cards on
// configurations that need a second person, asked for by someone else, with
// page, language, requester, time and a link — never an editor's own tour
// card on a one-person configuration; the navigation counts them.
func TestInboxListsOnlyCardsTheReaderMustDecide(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "Eine Tour von Erika."}`))
		erika := login(t, e, "erika", "erika-pass-1234")
		tour := startTour(t, erika, "1", "0", seo)
		contains(t, "erika's tour card", erika.get(tour), "Eine Tour von Erika.")
		e.LLM.Add(write("c2", `{"description": "Vier Augen sehen mehr."}`))
		run := e.As(wt.Erika).Must("POST", "/api/runs", map[string]any{"configuration": 2,
			"messages": []map[string]string{{"role": "user", "content": "Beschreibung bitte"}}}, http.StatusCreated).Map(t)
		uuid := run["uuid"].(string)
		for _, who := range []struct{ name, pass string }{{"paula", "paula-pass-1234"}} {
			b := login(t, e, who.name, who.pass)
			inbox := b.get("/inbox")
			contains(t, who.name+"'s inbox", inbox, "Vier Augen sehen mehr.", "Requested by erika",
				`<a class="page" href="/chat?page=1&amp;language=0">Home</a>`, `<span class="language">English</span>`,
				`<time datetime="`, `href="/inbox#run-`+uuid+`"`, `id="run-`+uuid+`"`)
			lacks(t, who.name+"'s inbox", inbox, "Eine Tour von Erika.")
			contains(t, who.name+"'s count", b.get("/inbox/count"), `data-count="1"`)
			contains(t, "navigation", inbox, `hx-get="/inbox/count"`)
		}
		// Nothing waits for erika's own decision in an inbox: her tour card is
		// answered in her conversation, her four-eyes card by someone else.
		lacks(t, "erika's count", erika.get("/inbox/count"), "data-count")
	})
}

// A card answered by someone else says by whom, in the editor's language; a
// skip taken elsewhere records the open point as the editor's own skip does
// (ADR-022: a skipped proposal is a finding not wanted now).
func TestCardSkippedBySomeoneElseSaysByWhomAndKeepsTheOpenPoint(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "Neu."}`), say("Weiter geht es."))
		erika := login(t, e, "erika", "erika-pass-1234")
		tour := startTour(t, erika, "1", "0", seo)
		id := strings.TrimPrefix(tour, "/chat/")
		conv := e.As(wt.Erika).Must("GET", "/api/conversations/"+id, nil, http.StatusOK).Map(t)
		runUUID, _ := conv["pendingRunUuid"].(string)
		card, _ := conv["card"].(map[string]any)
		if runUUID == "" || card == nil {
			t.Fatalf("no card waits: %v", conv)
		}
		e.As(wt.Paula).Must("POST", "/api/runs/"+runUUID+"/approval",
			wt.Approve{Approve: false, TurnDigest: card["turnDigest"].(string), Reason: "skip"}, http.StatusOK)
		e.App.Chat.Wait()
		view := erika.get(tour + "/view")
		contains(t, "erika's transcript", view, "Von paula übersprungen; als offener Punkt vermerkt.")
		lacks(t, "erika's transcript", view, "Von jemand anderem abgelehnt.")
		conv = e.As(wt.Erika).Must("GET", "/api/conversations/"+id, nil, http.StatusOK).Map(t)
		msgs := conv["messages"].([]any)
		found := false
		for _, m := range msgs {
			if m.(map[string]any)["notice"] == "skipped_elsewhere@3" {
				found = true
			}
		}
		if !found {
			t.Errorf("no notice skipped_elsewhere@3 in %v", msgs)
		}
		points := e.As(wt.Erika).Must("GET", "/api/pages/1/open-points?skill="+seo, nil, http.StatusOK).Map(t)
		if list, _ := points["openPoints"].([]any); len(list) != 1 {
			t.Errorf("open points after paula's skip = %v, want the one skipped description", points)
		}
	})
}

// Every "Eine Seite verbessern" link starts a tour: the page, its language
// and a process, so that one click and Starten begin it — also for a page
// without open points. The picker then shows the page titles in the chosen
// language where a translation exists, and follows a change of language.
func TestDashboardLinksStartATourAndThePickerSpeaksTheLanguage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		erika := login(t, e, "erika", "erika-pass-1234")
		d := erika.get("/dashboard")
		improve := d.Body[strings.Index(d.Body, "Eine Seite verbessern"):]
		links := regexpAll(`<a href="(/chat\?[^"]*)">`, improve)
		if len(links) == 0 {
			t.Fatalf("no suggestion links:\n%s", improve)
		}
		for _, l := range links {
			if !strings.Contains(l, "&amp;skill="+seo) {
				t.Errorf("suggestion link %q starts no process", l)
			}
		}
		german := erika.get("/chat?page=1&language=1&skill=" + seo)
		contains(t, "picker in German", german, `value="1" checked> Startseite</label>`, `<option value="1" selected>Deutsch</option>`,
			`<option value="12" selected>SEO optimieren</option>`, `hx-get="/chat/picker"`)
		lacks(t, "picker in German", german, `checked> Home</label>`)
		english := erika.get("/chat/picker?page=1&language=0&skill=" + seo)
		contains(t, "picker in English", english, `value="1" checked> Home</label>`, `id="picker"`)
		lacks(t, "picker in English", english, "<html")
		// Starten starts the tour in that language.
		e.LLM.Add(say("Los geht es."))
		a := erika.post("/chat", url.Values{"page": {"1"}, "language": {"1"}, "skill": {seo}})
		if !convPath.MatchString(a.Header.Get("HX-Redirect")) {
			t.Fatalf("Starten = %d %q: %s", a.Status, a.Header.Get("HX-Redirect"), a.Body)
		}
		e.App.Chat.Wait()
	})
}

func regexpAll(expr, s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(expr).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// readOnlySite is site with a page erika may only read (Impressum, uid 3).
var readOnlySite = strings.Replace(site, "  - {uid: 11, pid: 0,",
	"  - {uid: 3, pid: 1, title: Impressum, owner: 1, group: 1, perms: {user: 31, group: 1, everybody: 0}, fields: {description: \"\"}}\n  - {uid: 11, pid: 0,", 1)

// States that read true: a process chosen in the "/" menu is ready, not
// "Analyse läuft"; a tour on a page the editor may only read does not begin
// and says why; a model failure is a sentence with a retry; the answer to a
// card is shown once, as its status line; after the last card the tour
// says done — Fertig, the next page with open points, no ×, no highlight.
func TestTourStatesReadTrue(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, readOnlySite, nil)
		erika := login(t, e, "erika", "erika-pass-1234")

		// Read-only page: refused before anything starts, with the reason.
		a := erika.post("/chat", url.Values{"page": {"3"}, "language": {"0"}, "skill": {seo}})
		contains(t, "tour on a read-only page", a, `role="alert"`, "Diese Seite darfst du nur lesen")
		if a.Header.Get("HX-Redirect") != "" {
			t.Errorf("a tour on a read-only page started: %q", a.Header.Get("HX-Redirect"))
		}

		// A process chosen in a free chat: nothing runs, the header says so.
		free := startTour(t, erika, "1", "0", "0")
		erika.post(free+"/skill", url.Values{"skill": {seo}})
		chosen := erika.get(free)
		contains(t, "process chosen", chosen, `<span class="state">Bereit</span>`)
		lacks(t, "process chosen", chosen, "Analyse läuft")

		// A model failure: a sentence and a retry, not a code.
		e.LLM.Add(llmtest.Reply{Status: http.StatusBadRequest, ErrorMessage: "bad request"})
		erika.post(free+"/messages", url.Values{"content": {"Was fehlt hier?"}})
		e.App.Chat.Wait()
		failed := erika.get(free)
		contains(t, "model failure", failed, ">Erneut versuchen</button>", `name="content" value="Was fehlt hier?"`)
		lacks(t, "model failure", failed, "(provider_failed)", "(not_retryable)", "Das hat nicht geklappt (provider", "Das hat nicht geklappt (not_")
		// The failure's sentence is said once: the alert with the retry, not
		// also the transcript's notice above it.
		alert := regexp.MustCompile(`<p class="error" role="alert">([^<]+)</p>`).FindStringSubmatch(failed.Body)
		if alert == nil {
			t.Fatalf("model failure: no alert:\n%s", failed.Body)
		}
		if n := strings.Count(failed.Body, alert[1]); n != 1 {
			t.Errorf("model failure: %q is shown %d times, want once", alert[1], n)
		}
		contains(t, "model failure in the list", failed, "SEO optimieren · unterbrochen</span>")

		// A skipped point on About gives the dashboard a next page.
		e.LLM.Add(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "s1", Name: "update_page_metadata", Arguments: `{"page": 2, "fields": {"description": "Über uns."}}`}}}, say("Gut."))
		about := startTourOn(t, erika, "2")
		erika.post(about+"/answer", url.Values{"turnDigest": {turnDigest(t, erika.get(about))}, "answer": {"skip"}})
		e.App.Chat.Wait()

		// The last card of a tour on Home: applied once, then done.
		e.LLM.Add(
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "h1", Name: "highlight_record", Arguments: `{"table": "tt_content", "uid": 100}`}}},
			write("c1", `{"description": "Neu und gut."}`),
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p1", Name: "set_progress", Arguments: `{"current": 1, "total": 1, "completed": true}`}}},
			say("Fertig."))
		home := startTourOn(t, erika, "1")
		erika.post(home+"/answer", url.Values{"turnDigest": {turnDigest(t, erika.get(home))}, "answer": {"apply"}})
		e.App.Chat.Wait()
		done := erika.get(home)
		contains(t, "tour done", done, `<span class="state">Abgeschlossen</span>`, `<a class="button" href="/dashboard">Fertig</a>`,
			`<a href="/chat?page=2&amp;language=0&amp;skill=12">Nächste Seite mit offenen Punkten: About (English)</a>`,
			`<li class="outcome applied">`)
		// The conversation list says what the header says.
		contains(t, "tour done in the list", done, "SEO optimieren · abgeschlossen</span>")
		lacks(t, "tour done", done, `aria-label="Tour beenden"`, `class="element highlighted"`, `<li class="message user">
        <span class="who">Du</span>
        <div class="text"><p>Übernehmen</p>`)
		contains(t, "skipped outcome", erika.get(about), `<li class="outcome skipped">`)
	})
}

// startTourOn starts the seo tour on page (English) and returns its path.
func startTourOn(t *testing.T, b *browser, page string) string {
	t.Helper()
	return startTour(t, b, page, "0", seo)
}

// A message typed while a card waits withdraws it with a trace in the
// transcript, and the turn that answers the message is told what was
// withdrawn, so that the same card does not simply come back.
func TestMessageWithdrawsTheWaitingCardWithATrace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "Neu."}`))
		erika := login(t, e, "erika", "erika-pass-1234")
		tour := startTourOn(t, erika, "1")
		turnDigest(t, erika.get(tour))
		e.LLM.Add(say("Gern, zuerst deine Frage."))
		before := len(e.LLM.Requests())
		erika.post(tour+"/messages", url.Values{"content": {"Warum diese Beschreibung?"}})
		e.App.Chat.Wait()
		view := erika.get(tour)
		contains(t, "after the message", view, "Vorschlag zurückgezogen: deine Nachricht geht vor.", "Warum diese Beschreibung?", "Gern, zuerst deine Frage.")
		lacks(t, "after the message", view, `name="turnDigest"`)
		sys := systemPrompt(t, e, before)
		if !strings.Contains(sys, "withdrew your waiting proposal (update_page_metadata pages:1 (description))") ||
			!strings.Contains(sys, "do not propose the same change again") {
			t.Errorf("the turn after the withdrawal is not told what was withdrawn:\n%s", sys)
		}
	})
}
