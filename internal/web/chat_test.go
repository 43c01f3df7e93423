package web_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// Screens 2–5: a tour started from the picker shows the header, a card with
// the reference's labels, the word diff and the length against the range;
// Übernehmen writes, the status line follows, and the preview shows the
// applied text; the summary groups the outcomes at completion.
func TestTourCardAppliesAndPreviewShowsTheChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		long := "Home of the demo company: websites, shops and consulting for medium-sized firms in the north, from the first sketch to hosting."
		e.LLM.Add(
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "h1", Name: "highlight_record", Arguments: `{"table": "tt_content", "uid": 100}`}}},
			write("c1", `{"description": "`+long+`"}`),
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p1", Name: "set_progress", Arguments: `{"current": 1, "total": 1, "completed": true}`}}},
			say("Fertig."))
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", seo)
		page := b.get(path)
		contains(t, "tour page", page,
			"Home · English · <span class=\"state\">Wartet auf deine Antwort</span>", `aria-label="Tour beenden"`, "Prozess: SEO optimieren",
			"Bitte starte: SEO optimieren", "Betroffen", "Seite „Home“", "Beschreibung", "Aktuell", "Vorschlag",
			"<ins>"+long+"</ins>", fmt.Sprintf("%d Zeichen, empfohlen 140–160", utf8.RuneCountInString(long)), "außerhalb der empfohlenen Länge", "Technische Details",
			">Übernehmen</button>", ">Andere Variante</button>", ">Überspringen</button>", ">Behalten</button>",
			"Wartet auf deine Freigabe", `hx-disabled-elt="find fieldset"`,
			`id="element-tt_content-100" class="element highlighted"`, "Hervorgehoben")
		b.post(path+"/answer", url.Values{"turnDigest": {turnDigest(t, page)}, "answer": {"apply"}})
		e.App.Chat.Wait()
		view := b.get(path + "/view")
		contains(t, "after Übernehmen", view, "Übernommen: Seite „Home“ – Beschreibung", "Abgeschlossen",
			"Zusammenfassung der Tour", "1 übernommen",
			`<aside id="preview" class="preview" aria-labelledby="preview-heading" hx-swap-oob="true">`,
			`<nav id="sidebar" class="sidebar" aria-labelledby="conversations-heading" hx-swap-oob="true">`, "<dd>"+long+"</dd>")
		lacks(t, "after Übernehmen", view, ">Übernehmen</button>")
		// The JSON API says the same words: the outcome's labels in erika's language.
		conv := e.As(wt.Erika).Must("GET", "/api/conversations/"+strings.TrimPrefix(path, "/chat/"), nil, 200).Map(t)
		labels, _ := conv["outcomes"].([]any)[0].(map[string]any)["labels"].(map[string]any)
		if labels["tableLabel"] != "Seite" || labels["recordTitle"] != "Home" || fmt.Sprint(labels["fieldLabels"]) != "[Beschreibung]" {
			t.Errorf("outcome labels = %v", labels)
		}
		contains(t, "sidebar", b.get("/chat"), `<span class="title">Home</span>`, "English · SEO optimieren · ")
	})
}

// Model text is Markdown rendered on the server with no raw HTML.
func TestModelMarkdownRendersWithoutRawHTML(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(say("**Wichtig:** <script>alert(1)</script><img src=x onerror=alert(2)> [link](javascript:alert(3))"))
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", "0")
		b.post(path+"/messages", url.Values{"content": {"Hallo <b>du</b>"}})
		e.App.Chat.Wait()
		page := b.get(path)
		contains(t, "markdown", page, "<strong>Wichtig:</strong>", "Hallo")
		lacks(t, "markdown", page, "<script>alert", "onerror", "javascript:alert", "<b>du</b>")
	})
}

// A refused action changes nothing and says why: a second message while the
// card waits in an ordinary conversation is busy.
func TestStaleAnswerShowsMessageAndChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "Neu."}`))
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", seo)
		a := b.post(path+"/answer", url.Values{"turnDigest": {"v1:stale"}, "answer": {"apply"}})
		contains(t, "stale answer", a, `role="alert"`, "Dieser Vorschlag hat sich inzwischen geändert.", ">Übernehmen</button>")
		var desc string
		if err := db.QueryRow(t.Context(), "SELECT fields FROM records WHERE tbl = 'pages' AND uid = 1").Scan(&desc); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(desc, "Neu.") {
			t.Errorf("a stale answer wrote: %s", desc)
		}
	})
}

// Screen 2: the slash menu lists the conversation configuration's processes
// as an ARIA combobox; choosing one sets the chip, × removes it.
func TestSlashMenuListsProcessesAndChipRemovesThem(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", "0")
		page := b.get(path)
		contains(t, "composer", page, `role="combobox"`, `aria-controls="slash-list"`, `role="listbox"`,
			`role="option" id="slash-12" data-skill="12"`, "SEO optimieren")
		a := b.post(path+"/skill", url.Values{"skill": {seo}})
		contains(t, "chip", a, "Prozess: SEO optimieren", `aria-label="Prozess SEO optimieren entfernen"`)
		a = b.post(path+"/skill", url.Values{"skill": {"0"}})
		lacks(t, "chip removed", a, "Prozess: SEO optimieren")
	})
}

// Screen 5: the preview of a German conversation shows the translation and
// outlines the element the run highlights.
func TestPreviewShowsTheConversationsLanguageAndOutlinesTheHighlight(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "h1", Name: "highlight_record", Arguments: `{"table": "tt_content", "uid": 101}`}}},
			say("Hier geht es um die Begrüßung."))
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "1", seo)
		page := b.get(path)
		contains(t, "German preview", page, "<h3>Startseite</h3>", `id="element-tt_content-101" class="element highlighted"`,
			"<h4>Willkommen</h4>", "Hervorgehoben")
		lacks(t, "German preview", page, "<h4>Welcome</h4>")
	})
}

// An ended tour says so: the header reads "Tour beendet" and the transcript
// closes with the notice, until the chat goes on.
func TestEndedTourSaysSoInTheHeaderAndTheTranscript(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "Eine Beschreibung."}`), say("Gut."))
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", seo)
		lacks(t, "running tour", b.get(path), "Tour beendet")
		b.post(path+"/end-tour", nil)
		e.App.Chat.Wait()
		contains(t, "after end-tour", b.get(path+"/view"),
			`Home · English · <span class="state">Tour beendet</span>`, "Die Tour ist beendet. Übernommene Änderungen bleiben erhalten")
		lacks(t, "after end-tour", b.get(path+"/view"), `aria-label="Tour beenden"`, ">Übernehmen</button>")
		b.post(path+"/messages", url.Values{"content": {"Danke"}})
		e.App.Chat.Wait()
		next := b.get(path + "/view")
		contains(t, "after the next message", next, "Danke", "Gut.")
		lacks(t, "after the next message", next, `<span class="state">Tour beendet</span>`)
	})
}
