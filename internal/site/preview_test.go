package site_test

import (
	"reflect"
	"strings"
	"testing"

	"waymark/internal/access"
	"waymark/internal/fixture"
	"waymark/internal/site"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// richText is a bodytext as TYPO3 13's RTE stores it.
const richText = `<p>Founded in 2009.</p>\n<p>We are <a href=\"t3://page?uid=2\">six people</a> in Kiel.<br>Since&nbsp;2009.</p><ul><li>Web</li><li>Print</li></ul><script>alert(1)</script>`

// The page preview shows the text of a rich-text field (tt_content.bodytext)
// as TYPO3's page module does, never its HTML: paragraphs and lines of plain
// text with the tags removed and the entities decoded. The value as stored
// stays in Bodytext (the API's read_page value).
func TestThePagePreviewShowsTheTextOfRichTextFields(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fx := strings.Replace(tree, "bodytext: Hello}", `bodytext: "`+richText+`"}`, 1)
		if _, err := fixture.Import(t.Context(), db, []byte(fx), "tree.yaml", &fixture.Options{}); err != nil {
			t.Fatal(err)
		}
		erika, err := access.LoadActor(t.Context(), nil, db, 2)
		if err != nil {
			t.Fatal(err)
		}
		p, err := site.New(db, nil, access.NewChecker(db, nil, nil)).Preview(t.Context(), erika, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Elements) != 1 {
			t.Fatalf("Preview(1, en) elements = %+v, want one", p.Elements)
		}
		e := p.Elements[0]
		want := [][]string{{"Founded in 2009."}, {"We are six people in Kiel.", "Since 2009."}, {"Web", "Print"}}
		if !reflect.DeepEqual(e.Text, want) {
			t.Errorf("Preview(1, en) text = %q, want %q", e.Text, want)
		}
		if !strings.HasPrefix(e.Bodytext, "<p>Founded in 2009.</p>") {
			t.Errorf("Preview(1, en) bodytext = %q, want the stored value", e.Bodytext)
		}
	})
}

// A text that shows nothing (an empty paragraph) has no paragraphs at all.
func TestAnEmptyRichTextShowsNoParagraph(t *testing.T) {
	for _, s := range []string{"", "<p>&nbsp;</p>", "<p><br></p>"} {
		if got := site.Paragraphs(s); got != nil {
			t.Errorf("Paragraphs(%q) = %q, want none", s, got)
		}
	}
	if got := site.Paragraphs("Hello"); !reflect.DeepEqual(got, [][]string{{"Hello"}}) {
		t.Errorf("Paragraphs(Hello) = %q", got)
	}
}
