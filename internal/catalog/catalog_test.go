package catalog

import "testing"

// TestEveryKeyExistsInEveryLanguage: a text added in one language only fails here.
func TestEveryKeyExistsInEveryLanguage(t *testing.T) {
	for _, a := range Languages {
		for _, b := range Languages {
			have := map[string]bool{}
			for _, k := range Keys(b) {
				have[k] = true
			}
			for _, k := range Keys(a) {
				if !have[k] {
					t.Errorf("key %q is in %s but missing in %s", k, a, b)
				}
			}
		}
	}
}

func TestGermanUsesTheReferenceLabels(t *testing.T) {
	de := For("de")
	for key, want := range map[string]string{
		"answer.apply": "Übernehmen", "answer.variant": "Andere Variante", "answer.skip": "Überspringen",
		"answer.keep": "Behalten", "card.affected": "Betroffen", "card.current": "Aktuell", "card.proposed": "Vorschlag",
		"tour.analysing": "Analyse läuft", "card.pending": "Wartet auf deine Freigabe",
	} {
		if got := de.Get(key); got != want {
			t.Errorf("de %s = %q, want %q", key, got, want)
		}
	}
	if got := de.Get("tour.progress", 2, 5); got != "Punkt 2 von 5" {
		t.Errorf("de tour.progress = %q, want Punkt 2 von 5", got)
	}
}

func TestLangFallsBackToEnglish(t *testing.T) {
	for in, want := range map[string]string{"de": "de", "de-DE": "de", "en": "en", "": "en", "fr": "en"} {
		if got := Lang(in); got != want {
			t.Errorf("Lang(%q) = %q, want %q", in, got, want)
		}
	}
}
