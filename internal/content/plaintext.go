package content

import (
	"strings"
	"unicode"

	"golang.org/x/net/html"
)

// PlainText is the text of a rich-text field (TYPO3's RTE, such as
// tt_content.bodytext: "<p>We are <a href=…>six people</a> in Kiel.</p>")
// as a reader sees it: tags removed, entities decoded, whitespace collapsed
// to single spaces; paragraphs and other blocks (p, div, h1–h6, ul, ol,
// table, blockquote …) are separated by an empty line ("\n\n"), line breaks
// (br) and list items (li) by a newline. Script, style and comments are left
// out. Text without markup comes back with its whitespace collapsed. The
// result is text, never HTML: show it escaped.
func PlainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return collapse(s)
	}
	var w textWriter
	z := html.NewTokenizer(strings.NewReader(s))
	skip := 0 // depth inside elements whose text is not shown
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken: // io.EOF: the tokenizer reads from a string
			return w.String()
		case html.TextToken:
			if skip == 0 {
				w.text(string(z.Text()))
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if hiddenElements[tag] {
				switch tt {
				case html.StartTagToken:
					skip++
				case html.EndTagToken:
					skip = max(skip-1, 0)
				}
				continue
			}
			switch {
			case tag == "br":
				if tt != html.EndTagToken {
					w.lineBreak()
				}
			case lineElements[tag]:
				w.breakAtLeast(lineBreak)
			case blockElements[tag]:
				w.breakAtLeast(paragraphBreak)
			case tag == "td" || tag == "th":
				w.space = true
			}
		}
	}
}

// The breaks between pieces of text.
const (
	noBreak = iota
	lineBreak
	paragraphBreak
)

// blockElements end a paragraph; lineElements end a line.
var (
	blockElements = set("address", "article", "aside", "blockquote", "caption", "details", "dialog", "div", "dl",
		"fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup",
		"hr", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "ul")
	lineElements   = set("li", "dt", "dd", "tr")
	hiddenElements = set("script", "style", "template", "title", "head", "iframe", "noscript", "object", "textarea")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// textWriter collects text: a space or break is written only between two
// pieces of text, never at the start, at the end or twice.
type textWriter struct {
	b       strings.Builder
	pending int  // the break before the next text
	space   bool // a space before the next text on the same line
}

func (w *textWriter) breakAtLeast(k int) { w.pending = max(w.pending, k) }

// lineBreak is a br: a second one in a row makes a paragraph break.
func (w *textWriter) lineBreak() { w.pending = min(w.pending+1, paragraphBreak) }

func (w *textWriter) text(s string) {
	for _, r := range s {
		switch {
		case r == '\u00ad': // a soft hyphen is not seen
			continue
		case unicode.IsSpace(r): // &nbsp; included
			w.space = true
			continue
		}
		if w.b.Len() > 0 {
			switch w.pending {
			case paragraphBreak:
				w.b.WriteString("\n\n")
			case lineBreak:
				w.b.WriteByte('\n')
			default:
				if w.space {
					w.b.WriteByte(' ')
				}
			}
		}
		w.pending, w.space = noBreak, false
		w.b.WriteRune(r)
	}
}

func (w *textWriter) String() string { return w.b.String() }

// collapse is text without markup with its whitespace collapsed.
func collapse(s string) string {
	var w textWriter
	w.text(s)
	return w.String()
}
