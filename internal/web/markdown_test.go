package web

import (
	"strings"
	"testing"
)

// Model text with a Markdown table and code is rendered as a table and code
// (styled by app.css: .message .text table, code, pre), sanitized.
func TestMarkdownRendersTablesAndCodeForTheTranscript(t *testing.T) {
	got := string(markdown("| Feld | Länge |\n|---|---|\n| SEO-Titel | 48 |\n\nSiehe `seo_title`:\n\n```\nSELECT 1;\n```\n\n<script>alert(1)</script>"))
	for _, want := range []string{"<table>", "<th>Feld</th>", "<td>SEO-Titel</td>", "<code>seo_title</code>", "<pre><code>SELECT 1;\n</code></pre>"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q missing in %s", want, got)
		}
	}
	if strings.Contains(got, "<script") {
		t.Errorf("a script survived: %s", got)
	}
}
