package serp

import (
	"net/url"
	"strings"
	"unicode"
)

// The widths a results page gives a title and a description, in pixels.
const (
	TitleMaxPx            = 600
	DescriptionDesktopMax = 920
	DescriptionPhoneMax   = 680
)

// Ellipsis ends a cut text.
const Ellipsis = "…"

// Input is what a search engine shows of a page: the title it lists (the SEO
// title, else the page title), the description, the site's base URL in the
// page's language ("https://example.org/de/"; may be empty), the page's slug
// ("/ueber-uns/team") and its language code ("de").
type Input struct {
	Title       string
	Description string
	Base        string
	Slug        string
	Language    string
}

// Preview is a page's search result, on a desktop and on a phone.
type Preview struct {
	URL         string  `json:"url"`        // base and slug joined; "" when there is neither
	Breadcrumb  string  `json:"breadcrumb"` // "example.org › de › ueber-uns"
	Language    string  `json:"language"`
	Title       string  `json:"title"`       // in full
	Description string  `json:"description"` // in full
	Desktop     Snippet `json:"desktop"`
	Phone       Snippet `json:"phone"`
}

// Snippet is the result as one kind of screen shows it: title and
// description as cut, whether they were cut, and their full widths against
// the widths the screen gives them, in pixels.
type Snippet struct {
	Title                string  `json:"title"`
	TitleTruncated       bool    `json:"titleTruncated"`
	TitleWidth           float64 `json:"titleWidth"`
	TitleMax             float64 `json:"titleMax"`
	Description          string  `json:"description"`
	DescriptionTruncated bool    `json:"descriptionTruncated"`
	DescriptionWidth     float64 `json:"descriptionWidth"`
	DescriptionMax       float64 `json:"descriptionMax"`
}

// Build returns the search result of in. Whitespace runs count as one space,
// as a browser shows them.
func Build(in Input) Preview {
	title, desc := collapse(in.Title), collapse(in.Description)
	p := Preview{Title: title, Description: desc, Language: in.Language}
	p.URL, p.Breadcrumb = Address(in.Base, in.Slug)
	p.Desktop = snippet(title, desc, DescriptionDesktopMax)
	p.Phone = snippet(title, desc, DescriptionPhoneMax)
	return p
}

func snippet(title, desc string, descMax float64) Snippet {
	s := Snippet{TitleMax: TitleMaxPx, DescriptionMax: descMax,
		TitleWidth: round(Width(title, TitleFontPx)), DescriptionWidth: round(Width(desc, DescriptionFontPx))}
	s.Title, s.TitleTruncated = Cut(title, TitleMaxPx, TitleFontPx)
	s.Description, s.DescriptionTruncated = Cut(desc, descMax, DescriptionFontPx)
	return s
}

func round(px float64) float64 { return float64(int(px*10+0.5)) / 10 }

// Cut returns s as it fits into maxPx pixels set at px pixels: s itself when
// it fits, else its longest start that fits together with "…", ended at a
// word boundary when the start has one (a single word longer than the
// width is cut inside), without the spaces and punctuation before the "…".
func Cut(s string, maxPx, px float64) (string, bool) {
	if Width(s, px) <= maxPx {
		return s, false
	}
	budget := maxPx - Width(Ellipsis, px)
	rs := []rune(s)
	n, w := 0, 0.0
	for n < len(rs) {
		cw := Width(string(rs[n]), px)
		if w+cw > budget {
			break
		}
		w += cw
		n++
	}
	cut := n
	if n < len(rs) && !unicode.IsSpace(rs[n]) {
		// Inside a word: back off to the space before it, if there is one.
		for i := n - 1; i > 0; i-- {
			if unicode.IsSpace(rs[i]) {
				cut = i
				break
			}
		}
	}
	head := strings.TrimRightFunc(string(rs[:cut]), func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(",;:-–—·|", r)
	})
	return head + Ellipsis, true
}

// Address joins base and slug into the page's URL and its breadcrumb as a
// results page writes it: the host without "www.", then the path's
// segments, separated by " › ". Without a base the breadcrumb is the slug's
// segments alone and the URL is the slug.
func Address(base, slug string) (string, string) {
	base, slug = strings.TrimSpace(base), strings.TrimSpace(slug)
	if base == "" && slug == "" {
		return "", ""
	}
	full := strings.TrimRight(base, "/") + "/" + strings.TrimLeft(slug, "/")
	if base == "" {
		full = "/" + strings.TrimLeft(slug, "/")
	}
	var parts []string
	path := full
	if u, err := url.Parse(full); err == nil && u.Host != "" {
		parts = append(parts, strings.TrimPrefix(u.Hostname(), "www."))
		path = u.Path
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == "" {
			continue
		}
		if d, err := url.PathUnescape(seg); err == nil {
			seg = d
		}
		parts = append(parts, seg)
	}
	return full, strings.Join(parts, " › ")
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
