package web

import (
	"context"
	"strings"
	"testing"

	"waymark/internal/catalog"
	"waymark/internal/content"
	"waymark/internal/tool"
)

// A card says before the answer where the change will land when the site's
// CMS decides it (beside TYPO3 with the bridge): live, or as a draft in the
// editor's workspace — in the reader's language; without it, nothing.
func TestACardSaysWhereTheChangeWillLand(t *testing.T) {
	pages, err := parseTemplates()
	if err != nil {
		t.Fatal(err)
	}
	u := &UI{}
	for _, c := range []struct {
		lang    string
		landing *content.Landing
		want    string
	}{
		{"de", &content.Landing{Workspace: 1, Title: "Redaktion"}, `<p class="landing draft">Wird als Entwurf im Arbeitsbereich „Redaktion“ gespeichert`},
		{"en", &content.Landing{Workspace: 0, Title: "Live"}, `<p class="landing">Lands live in TYPO3 when you apply it.</p>`},
		{"en", nil, ""},
	} {
		me := &user{T: catalog.For(c.lang)}
		call := u.callView(context.Background(), me, callParts{ID: "c1", Tool: "update_page_metadata",
			Preview: []tool.PreviewItem{{Field: "description", Label: "Description", Current: "a", Proposed: "b"}}, Landing: c.landing})
		var b strings.Builder
		if err := pages["chat"].ExecuteTemplate(&b, "card", cardData{T: me.T, Card: &cardView{Digest: "d", Calls: []callView{call}}}); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		if c.want == "" && strings.Contains(html, `class="landing`) || c.want != "" && !strings.Contains(html, c.want) {
			t.Errorf("%s %+v: card\n%s\nwant %q", c.lang, c.landing, html, c.want)
		}
	}
}

// Beside TYPO3 with the bridge a card links to its record in TYPO3's
// editor (the browser suite follows the link into TYPO3's FormEngine);
// without the bridge Waymark knows no TYPO3 backend and links nowhere.
func TestACardLinksToTheRecordInTYPO3sEditorOnlyBesideTheBridge(t *testing.T) {
	with := (&UI{typo3Backend: "https://cms.example.org/typo3/"}).editURL("tt_content", 7)
	if want := "https://cms.example.org/typo3/record/edit?edit%5Btt_content%5D%5B7%5D=edit"; with != want {
		t.Errorf("edit URL = %q, want %q", with, want)
	}
	if without := (&UI{}).editURL("tt_content", 7); without != "" {
		t.Errorf("edit URL without the bridge = %q, want none", without)
	}
}
