package web

import (
	"bytes"
	"html/template"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

var (
	md     = goldmark.New(goldmark.WithExtensions(extension.GFM)) // raw HTML is omitted (goldmark's default)
	policy = bluemonday.UGCPolicy()
)

// markdown renders model or user text as Markdown and sanitizes the HTML:
// no raw HTML, no scripts, no event handlers, safe links only. It is the only
// place text from a model becomes template.HTML.
func markdown(s string) template.HTML {
	var buf bytes.Buffer
	if err := md.Convert([]byte(s), &buf); err != nil {
		return template.HTML(template.HTMLEscapeString(s))
	}
	return template.HTML(policy.SanitizeBytes(buf.Bytes())) // #nosec: sanitized above
}
