package scenario_test

import (
	"net/http"
	"testing"

	"waymark/internal/demo"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// An editor sets her own language of the UI and the assistant through the
// API, as the settings screen does: GET /api/me and the assistant's closing
// summary follow it. Another value is refused and changes nothing.
func TestAnEditorSetsHerOwnLanguageThroughTheAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), nil)
		erika := e.As("demo-token-erika")
		for _, bad := range []any{"fr", "", 7} {
			r := erika.Do("PUT", "/api/me/language", map[string]any{"backendLanguage": bad})
			if r.Status != http.StatusBadRequest {
				t.Errorf("language %v = %d %s, want 400", bad, r.Status, r.Body)
			}
		}
		if got := erika.Must("GET", "/api/me", nil, http.StatusOK).Map(t)["backendLanguage"]; got != "de" {
			t.Fatalf("after refused changes the language is %v, want de", got)
		}
		me := erika.Must("PUT", "/api/me/language", map[string]any{"backendLanguage": "en"}, http.StatusOK).Map(t)
		if me["backendLanguage"] != "en" || me["username"] != "erika" {
			t.Fatalf("answer = %v", me)
		}
		if got := erika.Must("GET", "/api/me", nil, http.StatusOK).Map(t)["backendLanguage"]; got != "en" {
			t.Errorf("GET /api/me after the change = %v, want en", got)
		}
		// The assistant follows: a tour on the English page now ends in English.
		d := startDemoTour(t, e, 2, 0, 1)
		for _, a := range []string{"apply", "skip", "keep", "apply"} {
			d.answer(a)
		}
		if got := d.lastAssistant(); len(got) < 12 || got[:12] != "The tour of " {
			t.Errorf("closing message after switching to English = %q", got)
		}
	})
}
