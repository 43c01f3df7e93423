package content_test

import (
	"testing"

	"waymark/internal/content"
)

// PlainText is the text of a rich-text field as TYPO3's RTE stores it: tags
// removed, blocks as paragraphs, br and list items as lines, entities
// decoded, whitespace collapsed; script, style and comments left out.
func TestPlainTextIsTheTextOfRichTextHTML(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"We are Nordlicht Digital. We make websites.", "We are Nordlicht Digital. We make websites."},
		{"  plain\ttext\n with  spaces ", "plain text with spaces"},
		{"Müller & Söhne, a < b", "Müller & Söhne, a < b"},
		{"<p>Founded in 2009.</p>", "Founded in 2009."},
		{`<p>We are <a href="t3://page?uid=2">six people</a> in Kiel.</p>`, "We are six people in Kiel."},
		{"<p>Founded in 2009.</p>\n<p>We are six&nbsp;people.</p>", "Founded in 2009.\n\nWe are six people."},
		{"<p>&nbsp;</p><p>Text</p><p>&nbsp;</p>", "Text"},
		{"<p>Line one<br>line two<br/>line three</p>", "Line one\nline two\nline three"},
		{"<p>One<br><br>Two</p>", "One\n\nTwo"},
		{"<h2>History</h2><p>Since 2009.</p>", "History\n\nSince 2009."},
		{"<p>We offer:</p><ul><li>Websites</li><li>Shops</li></ul><p>Ask us.</p>", "We offer:\n\nWebsites\nShops\n\nAsk us."},
		{"<ol>\n  <li>First</li>\n  <li>Second</li>\n</ol>", "First\nSecond"},
		{"<div><div><p>Nested</p></div></div><div>Next</div>", "Nested\n\nNext"},
		{"<p><strong>Bold</strong>face and <em>emphasis</em>.</p>", "Boldface and emphasis."},
		{"<P CLASS=\"x\">Upper</P>", "Upper"},
		{"Fish &amp; chips &uuml; &#8211; &#x2014; &lt;p&gt;", "Fish & chips ü – — <p>"},
		{`<p title="a > b">Quoted</p>`, "Quoted"},
		{"<p>Shown</p><!-- <p>hidden</p> --><script>alert(1)</script><style>p{}</style>", "Shown"},
		{"<p>Hyphen&shy;ated</p>", "Hyphenated"},
		{"<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>", "a b\nc"},
		{"<p>Unclosed <b>bold", "Unclosed bold"},
		{"text <", "text <"},
	} {
		if got := content.PlainText(tc.in); got != tc.want {
			t.Errorf("PlainText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
