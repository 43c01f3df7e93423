package demo

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"waymark/internal/llm"
)

// kiel is a page of a real TYPO3 13 site that is not the demo site: its
// bodytext is rich-text HTML, and it names none of the demo site's facts.
func kiel(lang int64, header, body string) pageRead {
	return pageRead{Language: lang,
		Page: record{Table: "pages", UID: 2, Fields: map[string]string{"title": "About us", "description": "", "seoTitle": ""}},
		Content: []record{
			{Table: "tt_content", UID: 7, Language: lang, Fields: map[string]string{"CType": "text", "header": "Our history", "bodytext": body}},
			{Table: "tt_content", UID: 8, Language: lang, Fields: map[string]string{"CType": "text", "header": header, "bodytext": "<p>tbd</p>"}},
		}}
}

// proposeOn runs the demo model on a chat about page 2 whose read_page
// answered read, and returns the field values of its first proposal.
func proposeOn(t *testing.T, read pageRead) map[string]string {
	t.Helper()
	b, _ := json.Marshal(read)
	r, err := New().Complete(context.Background(), llm.Request{
		Tools: []llm.ToolSpec{{Name: "read_page"}, {Name: "update_page_metadata"}, {Name: "update_content"}},
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: pageContext("About us", 2, "English", read.Language, "English")},
			{Role: llm.RoleUser, Content: "Make the description better."},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_page", Arguments: `{"page":2}`}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: string(b)},
		}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Message.ToolCalls {
		if c.Name == "update_page_metadata" {
			var a struct{ Fields map[string]string }
			if err := json.Unmarshal([]byte(c.Arguments), &a); err != nil {
				t.Fatal(err)
			}
			return a.Fields
		}
	}
	t.Fatalf("no proposal: %+v", r.Message)
	return nil
}

// The demo model takes the page's own first sentence into a proposed meta
// description from the text of the bodytext, never from its HTML: no tags,
// no entities, no link targets.
func TestTheDemoModelNeverCopiesHTMLIntoADescription(t *testing.T) {
	for _, body := range []string{
		"<p>Founded in 2009.</p>\n<p>We are <a href=\"t3://page?uid=2\">six people</a> in Kiel.</p>",
		"<p>We are <a href=\"t3://page?uid=2\">six&nbsp;people</a> in Kiel.</p><ul><li>Boats</li><li>Sails</li></ul>",
		"<h2>Our story</h2><p>Since&nbsp;1990 &amp; still here.<br>More soon.</p>",
	} {
		d := proposeOn(t, kiel(0, "Team", body))["description"]
		if strings.ContainsAny(d, "<>\n") || strings.Contains(d, "&nbsp;") || strings.Contains(d, "&amp;") || strings.Contains(d, "t3://") {
			t.Errorf("bodytext %q: description %q holds HTML", body, d)
		}
		if n := utf8.RuneCountInString(d); n < 140 || n > 160 {
			t.Errorf("bodytext %q: description %q has %d characters, want 140 to 160", body, d, n)
		}
	}
	if d := proposeOn(t, kiel(0, "Team", "<p>We are <a href=\"t3://page?uid=2\">six people</a> in Kiel.</p><p>Boats.</p>"))["description"]; !strings.Contains(d, " We are six people in Kiel. ") {
		t.Errorf("description %q: want the page's own first sentence, as text", d)
	}
}

// demoFacts are what the demo site's wording says of Nordlicht Digital.
var demoFacts = []string{"Nordlicht", "Hamburg", "Altona", "2009", "24", "north", "Norden", "tourism", "Tourismus", "public sector", "öffentliche Hand"}

// On another site the demo model states none of the demo site's facts — not
// in a description, an SEO title, a header or a text, in no variant and in
// neither language: its proposals say only the page's title, the element's
// header and the page's own first sentence. On the demo site it keeps the
// demo's wording.
func TestTheDemoModelStatesNoDemoFactsOnAnotherSite(t *testing.T) {
	for _, lang := range []int64{0, germanLanguage} {
		read := kiel(lang, "Team", "<p>We are six people in Kiel.</p><p>We build boats.</p>")
		tr := &tour{read: &read, german: lang == germanLanguage, offered: map[string]bool{"update_page_metadata": true, "update_content": true}}
		all := tr.findings()
		if len(all) != 4 {
			t.Fatalf("language %d: findings %+v, want description, SEO title, header and text", lang, all)
		}
		for _, f := range all {
			for v := 0; v < 8; v++ {
				s := tr.propose(f, v)
				for _, fact := range demoFacts {
					if strings.Contains(s, fact) {
						t.Errorf("language %d, %s variant %d: %q states the demo site's %q", lang, f.field, v, s, fact)
					}
				}
			}
		}
	}
	if d := proposeOn(t, kiel(0, "Team", "<p>We are six people in Kiel.</p>"))["description"]; strings.Contains(d, "Nordlicht") {
		t.Errorf("another site: description %q names Nordlicht Digital", d)
	}
	demo := kiel(0, "Team", "Founded in 2009 by three developers, Nordlicht Digital has grown to a team of 24.")
	if d := proposeOn(t, demo)["description"]; !strings.Contains(d, "Nordlicht Digital") {
		t.Errorf("demo site: description %q, want the demo's wording", d)
	}
}
