package demo

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestProposalsLieWithinTheRecommendedLengthForEveryDemoPage: every wording
// of every variant, for each page title of the demo site in both languages
// (and, in the plain wording of other sites, for titles of another site),
// lies within the field's range, descriptions are whole sentences, and the
// first three variants differ.
func TestProposalsLieWithinTheRecommendedLengthForEveryDemoPage(t *testing.T) {
	titles := map[bool][]string{
		false: {"Home", "About", "Services", "Web development", "Consulting", "Blog", "Contact", "Imprint"},
		true:  {"Startseite", "Über uns", "Leistungen", "Webentwicklung", "Blog", "Kontakt"},
	}
	topics := []string{"", "We are Nordlicht Digital.", "2009 von drei Entwicklern gegründet, ist Nordlicht Digital heute ein Team von 24 Menschen."}
	t.Run("demo", func(t *testing.T) { lieWithinRange(t, words, titles, topics) })
	other := map[bool][]string{
		false: append(titles[false], "About us", "Team", "History", "Boat building in Kiel", "Sailing courses for beginners"),
		true:  append(titles[true], "Team", "Geschichte", "Bootsbau in Kiel", "Segelkurse für Anfänger"),
	}
	t.Run("plain", func(t *testing.T) {
		lieWithinRange(t, plainWords, other, append(topics, "We are six people in Kiel.", "Wir sind sechs Leute in Kiel."))
	})
}

func lieWithinRange(t *testing.T, words map[bool]wording, titles map[bool][]string, topics []string) {
	for de, list := range titles {
		for _, title := range list {
			for _, topic := range topics {
				seen := map[string]map[string]bool{"description": {}, "seoTitle": {}, "header": {}}
				for v := 0; v < 6; v++ {
					vals := map[string]string{
						"description": describe(words[de], title, topic, v),
						"seoTitle":    first(words[de].titles, title, v, ranges["seoTitle"]),
						"header":      first(words[de].headers, title, v, ranges["header"]),
					}
					for field, s := range vals {
						r, n := ranges[field], utf8.RuneCountInString(s)
						if n < r[0] || n > r[1] {
							t.Errorf("%s of %q (variant %d) = %q: %d characters, want %d to %d", field, title, v, s, n, r[0], r[1])
						}
						if v < 3 {
							seen[field][s] = true
						}
					}
					if d := vals["description"]; !strings.HasSuffix(d, ".") || strings.Contains(d, "..") {
						t.Errorf("description of %q (variant %d) = %q: not whole sentences", title, v, d)
					}
				}
				for field, s := range seen {
					if field != "header" && len(s) < 3 {
						t.Errorf("%s of %q: only %d different wordings in three variants", field, title, len(s))
					}
				}
			}
		}
	}
}
