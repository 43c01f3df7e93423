package web_test

import (
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// The page preview shows the text of a rich-text bodytext as TYPO3's page
// module does — paragraphs and line breaks of plain text — and never its
// HTML, neither as markup nor as escaped text: the editor reads "Founded in
// 2009.", not "<p>Founded in 2009.</p>".
func TestThePagePreviewShowsTheTextOfRichTextFields(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		rich := strings.Replace(site, `bodytext: "Hello there"`,
			`bodytext: "<p>Founded in 2009.</p>\n<p>We are <a href=\"t3://page?uid=2\" onclick=\"x()\">six people</a> in Kiel.<br>Since&nbsp;2009.</p><script>alert(1)</script>"`, 1)
		if rich == site {
			t.Fatal("the fixture has no bodytext to replace")
		}
		e := wt.New(t, db, rich, nil)
		e.LLM.Add(say("Gut."))
		b := login(t, e, "erika", "erika-pass-1234")
		page := b.get(startTour(t, b, "1", "0", seo))
		contains(t, "preview", page, "<h4>Welcome</h4>",
			"<p>Founded in 2009.</p><p>We are six people in Kiel.<br>Since 2009.</p>")
		lacks(t, "preview", page, "&lt;p&gt;", "t3://", "onclick", "alert(1)", "&amp;nbsp;")
	})
}
