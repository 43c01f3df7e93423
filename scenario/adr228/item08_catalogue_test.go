package adr228_test

import (
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L8.1–L8.4: the catalogue lists approved process skills with their snapshot
// names; empty for service accounts and four-eyes configurations; 404 alike.
func TestL8_CatalogueListsApprovedProcesses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		got := e.As(wt.Erika).Must("GET", "/api/configurations/1/process-skills", nil, 200).Map(t)["skills"].([]any)
		if len(got) != 1 {
			t.Fatalf("catalogue = %v", got)
		}
		s := got[0].(map[string]any)
		if s["uid"] != 12.0 || s["identifier"] != "seo" || s["name"] != "SEO optimieren" {
			t.Errorf("entry = %v", s)
		}
		if l := e.As(wt.Robot).Must("GET", "/api/configurations/1/process-skills", nil, 200).Map(t)["skills"].([]any); len(l) != 0 {
			t.Errorf("service account sees %v", l)
		}
		if l := e.As(wt.Erika).Must("GET", "/api/configurations/2/process-skills", nil, 200).Map(t)["skills"].([]any); len(l) != 0 {
			t.Errorf("four-eyes configuration lists %v", l)
		}
		exec(t, db, `UPDATE configurations SET active = FALSE WHERE uid = 2`)
		a := e.As(wt.Erika).Do("GET", "/api/configurations/99/process-skills", nil)
		b := e.As(wt.Erika).Do("GET", "/api/configurations/2/process-skills", nil)
		if a.Status != 404 || b.Status != 404 || string(a.Body) != string(b.Body) {
			t.Errorf("unknown %d %s vs inactive %d %s", a.Status, a.Body, b.Status, b.Body)
		}
	})
}
