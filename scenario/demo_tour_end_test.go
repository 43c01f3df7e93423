package scenario_test

import (
	"encoding/json"
	"strings"
	"testing"

	"waymark/internal/demo"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// TestDemoTourEndsCompletedWithASummary: after the last point the demo model
// reports completion ("point 4 of 4", completed) and closes with a summary in
// the language the editor reads (her backend language), whatever the page's
// language; the conversation is idle with the grouped summary.
func TestDemoTourEndsCompletedWithASummary(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), nil)
		// erika reads German; the page is in English.
		d := startDemoTour(t, e, 2, 0, 1)
		for _, a := range []string{"apply", "skip", "keep", "apply"} {
			d.answer(a)
		}
		if d.conv["status"] != "idle" || d.conv["card"] != nil {
			t.Fatalf("after the last point: status %v (%v), messages %v", d.conv["status"], d.conv["error"], d.conv["messages"])
		}
		if c, n, done := d.progress(); c != 4 || n != 4 || !done {
			t.Errorf("final progress = %d of %d (completed %v), want 4 of 4 completed", c, n, done)
		}
		sum, _ := json.Marshal(d.conv["summary"])
		if string(sum) != `{"applied":2,"check":0,"kept":1,"notApplied":0,"skipped":1}` {
			t.Errorf("summary = %s", sum)
		}
		want := "Die Tour durch „About“ ist fertig: 4 Punkte. Übernommen: Meta-Beschreibung, Überschrift „Team“. " +
			"Übersprungen und als offene Punkte im Dashboard: SEO-Titel. Unverändert behalten: Überschrift „About“."
		if got := d.lastAssistant(); got != want {
			t.Errorf("closing message = %q, want %q", got, want)
		}

		// paula reads English; the page is the German translation.
		en := startDemoTourAs(t, e, "demo-token-paula", 2, 1, 1)
		for _, a := range []string{"apply", "skip", "apply"} {
			en.answer(a)
		}
		if got := en.lastAssistant(); !strings.HasPrefix(got, "The tour of “Über uns” is done: 3 points. Applied: meta description, header “Über uns”.") {
			t.Errorf("English closing message = %q", got)
		}
	})
}
