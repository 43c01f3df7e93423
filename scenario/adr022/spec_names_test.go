package adr022_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// siteSpecName is site with the process skill declaring the list tool by the
// name ADR-022 gives it, chat_list_open_points.
var siteSpecName = strings.Replace(site, "allowed-tools: [read_page, update_page_metadata, update_content, set_progress]",
	"allowed-tools: [read_page, update_page_metadata, update_content, set_progress, chat_list_open_points]", 1)

// P.O2: the read tool answers to the name the specification gives it,
// chat_list_open_points — a process skill that declares that name is offered
// it, and a call lists the page's open points as identities and field names.
func TestPO2_ListToolAnswersToTheSpecNameChatListOpenPoints(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if siteSpecName == site {
			t.Fatal("the fixture's allowed-tools line changed; siteSpecName no longer declares chat_list_open_points")
		}
		e := wt.New(t, db, siteSpecName, nil)
		e.LLM.Add(write("c1", `{"description": "first"}`), answer("weiter"),
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "l1", Name: "chat_list_open_points", Arguments: `{"page": 1}`}}},
			answer("Ein offener Punkt."))
		erika := e.As(wt.Erika)
		decided(t, e, erika, said(t, e, erika, opened(t, erika, seo).ID, "Los"), "skip")
		if countPoints(t, db) != 1 {
			t.Fatal("no open point recorded")
		}
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Was ist offen?")
		if conv.Status != "idle" {
			t.Fatalf("conversation = %+v, want idle after the listed points", conv)
		}
		reqs := e.LLM.Requests()
		last := reqs[len(reqs)-1]
		if names := strings.Join(toolNamesOf(last), ","); !strings.Contains(names, "chat_list_open_points") {
			t.Errorf("offered tools = %s, want chat_list_open_points among them", names)
		}
		var result string
		for _, m := range last.Messages {
			if m.Role == llm.RoleTool && m.ToolCallID == "l1" {
				result = m.Content
			}
		}
		for _, want := range []string{`"openPoints"`, `"table":"pages"`, `"field":"description"`, `"skill":12`} {
			if !strings.Contains(result, want) {
				t.Errorf("chat_list_open_points result = %q, want %s in it", result, want)
			}
		}
		if strings.Contains(result, "unknown tool") || strings.Contains(result, "first") {
			t.Errorf("chat_list_open_points result = %q, want the points without values", result)
		}
	})
}

func toolNamesOf(req llmtest.RecordedRequest) []string {
	var out []string
	for _, tl := range req.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// P.D2: the open-point sentences come from the catalogue labels
// openPoint.missing and openPoint.open (ADR-022), in the reader's backend
// language: the summaries are those labels filled with the field label and
// the page title, and GET /api/labels serves the labels themselves.
func TestPD2_OpenPointSentencesComeFromTheCatalogueLabels(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "x", "seoTitle": "y"}`), answer("Weiter."))
		erika, paula := e.As(wt.Erika), e.As(wt.Paula)
		decided(t, e, erika, said(t, e, erika, opened(t, erika, seo).ID, "Los"), "skip")
		// seoTitle is set on the page; description is empty.
		if _, err := db.Exec(t.Context(), `UPDATE records SET fields = '{"title":"Home","seoTitle":"Start"}' WHERE tbl = 'pages' AND uid = 1`); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			who    *wt.Client
			lang   string
			labels map[string]string // field → its label in lang
		}{
			{erika, "de", map[string]string{"description": "Beschreibung", "seoTitle": "SEO-Titel"}},
			{paula, "en", map[string]string{"description": "Description", "seoTitle": "SEO title"}},
		} {
			labels := wt.Decode[struct {
				Labels map[string]string `json:"labels"`
			}](t, c.who.Must("GET", "/api/labels?lang="+c.lang, nil, http.StatusOK)).Labels
			missing, open := labels["openPoint.missing"], labels["openPoint.open"]
			if !strings.Contains(missing, "%s") || !strings.Contains(open, "%s") {
				t.Fatalf("labels (%s) openPoint.missing = %q, openPoint.open = %q, want two templates", c.lang, missing, open)
			}
			got := map[string]string{}
			for _, p := range pagePoints(t, c.who) {
				got[p.Field] = p.Summary
			}
			if want := fmt.Sprintf(missing, c.labels["description"], "Home"); got["description"] != want {
				t.Errorf("%s summary of description = %q, want %q (openPoint.missing)", c.lang, got["description"], want)
			}
			if want := fmt.Sprintf(open, c.labels["seoTitle"], "Home"); got["seoTitle"] != want {
				t.Errorf("%s summary of seoTitle = %q, want %q (openPoint.open)", c.lang, got["seoTitle"], want)
			}
		}
	})
}
