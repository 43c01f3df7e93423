package web_test

import (
	"net/http"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// A card that changes a page's description shows the page's search result
// with the proposal, on a desktop and on a phone, in the chat, in the JSON
// API (searchPreview) and in the approver's inbox: the phone cuts the long
// description with "…" where the desktop shows more of it.
func TestACardThatChangesTheDescriptionShowsTheSearchResult(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		long := "Home of the demo company: websites, shops and consulting for medium-sized firms in the north, from the first sketch to hosting and care for many years."
		e.LLM.Add(write("c1", `{"description": "`+long+`"}`))
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", seo)
		page := b.get(path)
		contains(t, "chat card", page, `aria-label="Vorschau im Suchergebnis"`, `class="serp-result serp-desktop" lang="en"`,
			"<figcaption>Desktop</figcaption>", "<figcaption>Smartphone</figcaption>", `<p class="serp-title">Home</p>`,
			"Beschreibung gekürzt: ")
		conv := e.As(wt.Erika).Must("GET", "/api/conversations/"+strings.TrimPrefix(path, "/chat/"), nil, http.StatusOK).Map(t)
		call := conv["card"].(map[string]any)["calls"].([]any)[0].(map[string]any)
		sp, ok := call["searchPreview"].(map[string]any)
		if !ok {
			t.Fatalf("card call without searchPreview: %v", call)
		}
		desktop, phone := sp["desktop"].(map[string]any), sp["phone"].(map[string]any)
		if sp["description"] != long || sp["language"] != "en" || sp["title"] != "Home" {
			t.Errorf("searchPreview = %v", sp)
		}
		pd, dd := phone["description"].(string), desktop["description"].(string)
		if phone["descriptionTruncated"] != true || !strings.HasSuffix(pd, "…") || len(pd) >= len(dd) {
			t.Errorf("phone description %q (cut %v), desktop %q: want the phone's cut shorter with …", pd, phone["descriptionTruncated"], dd)
		}
		if desktop["titleTruncated"] != false || desktop["titleMax"] != 600.0 || phone["descriptionMax"] != 680.0 || desktop["descriptionMax"] != 920.0 {
			t.Errorf("desktop %v phone %v", desktop, phone)
		}
	})
}

// The approver's inbox card shows the search result too.
func TestTheInboxCardShowsTheSearchResult(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "Vier Augen sehen mehr."}`))
		e.As(wt.Erika).Must("POST", "/api/runs", map[string]any{"configuration": 2,
			"messages": []map[string]string{{"role": "user", "content": "Beschreibung bitte"}}}, http.StatusCreated)
		paula := login(t, e, "paula", "paula-pass-1234")
		contains(t, "inbox", paula.get("/inbox"), `aria-label="Search result preview"`, "<figcaption>Phone</figcaption>",
			`<p class="serp-title">Home</p>`, `<p class="serp-desc">Vier Augen sehen mehr.</p>`)
	})
}
