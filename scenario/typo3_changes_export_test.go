package scenario_test

import (
	"testing"

	"waymark/internal/demo"
	"waymark/internal/typo3/typo3test"
	wt "waymark/internal/waymarktest"
)

// The export of applied changes lists a change the direct writer wrote into
// TYPO3 (on MariaDB and on PostgreSQL) as it lists one written into
// Waymark's own records: the field with the value before and after, the
// page, who answered, the run, configuration and process — though Waymark
// keeps neither the record nor its history (TYPO3's sys_history is that).
// A card left unanswered adds nothing.
func TestTheChangesExportListsAChangeWrittenIntoTYPO3(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		db, d := t3.DB, t3.Dialect
		before := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2")
		e := besideTYPO3(t, nil, t3, string(demo.Fixture), nil)
		tour := startDemoTour(t, e, 2, 0, 1)
		desc := tour.expect("pages", 2, "description", 1, 4, "pages:2")
		tour.answer("apply")
		tour.expect("pages", 2, "seoTitle", 2, 4, "pages:2") // the next card, unanswered
		type change struct {
			Page                         int64
			Table, Field                 string
			UID                          int64
			OldValue, NewValue           string
			Run, AnsweredBy, ReleasedBy  string
			Configuration                int64
			SkillIdentifier, SkillDigest string
		}
		for _, token := range []string{"demo-token-erika", "demo-token-admin"} {
			got := wt.Decode[struct{ Changes []change }](t, e.As(token).Must("GET", "/api/changes?format=json", nil, 200)).Changes
			if len(got) != 1 {
				t.Fatalf("%s's export: %+v, want the one applied change", token, got)
			}
			c := got[0]
			if c.Page != 2 || c.Table != "pages" || c.UID != 2 || c.Field != "description" || c.OldValue != before || c.NewValue != desc.text ||
				c.AnsweredBy != "erika" || c.ReleasedBy != "" || c.Run == "" || c.Configuration != 1 || c.SkillIdentifier != "seo-optimieren" || c.SkillDigest == "" {
				t.Errorf("%s's export: %+v, want pages:2 description %q → %q answered by erika", token, c, before, desc.text)
			}
		}
		if got := wt.Decode[struct{ Changes []change }](t, e.As("demo-token-max").Must("GET", "/api/changes?format=json", nil, 200)).Changes; len(got) != 0 {
			t.Errorf("max's export lists erika's change: %+v", got)
		}
		noWaymarkCopy(t, e.DB)
	})
}
