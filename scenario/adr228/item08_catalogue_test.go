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
		catalogue := func(token string, cfg int64) []wt.ProcessSkill {
			t.Helper()
			l, r := e.As(token).ProcessSkills(cfg)
			if r.Status != 200 {
				t.Fatalf("process-skills of %d = %d, want 200: %s", cfg, r.Status, r.Body)
			}
			return l
		}
		got := catalogue(wt.Erika, 1)
		if len(got) != 1 {
			t.Fatalf("catalogue = %+v", got)
		}
		if s := got[0]; s.UID != 12 || s.Identifier != "seo" || s.Name != "SEO optimieren" {
			t.Errorf("entry = %+v", s)
		}
		if l := catalogue(wt.Robot, 1); len(l) != 0 {
			t.Errorf("service account sees %+v", l)
		}
		if l := catalogue(wt.Erika, 2); len(l) != 0 {
			t.Errorf("four-eyes configuration lists %+v", l)
		}
		exec(t, db, `UPDATE configurations SET active = FALSE WHERE uid = 2`)
		a := e.As(wt.Erika).Do("GET", "/api/configurations/99/process-skills", nil)
		b := e.As(wt.Erika).Do("GET", "/api/configurations/2/process-skills", nil)
		if a.Status != 404 || b.Status != 404 || string(a.Body) != string(b.Body) {
			t.Errorf("unknown %d %s vs inactive %d %s", a.Status, a.Body, b.Status, b.Body)
		}
	})
}

// L8.3: the catalogue's names and descriptions come from the approval
// snapshot, not the live skill row: a row whose name and description were
// changed behind the store's back (its digest column still naming the
// approved version) lists the approved text.
func TestL8_3_CatalogueNamesComeFromTheApprovalSnapshotNotTheLiveRow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		exec(t, db, `UPDATE skills SET name = 'LIVE NAME', description = 'LIVE DESCRIPTION' WHERE uid = 12`)
		l, r := e.As(wt.Erika).ProcessSkills(1)
		if r.Status != 200 || len(l) != 1 {
			t.Fatalf("process-skills = %d %s", r.Status, r.Body)
		}
		if s := l[0]; s.Name != "SEO optimieren" || s.Description != "Die Seite Schritt für Schritt für Suchmaschinen verbessern." {
			t.Errorf("entry = %+v, want the approved snapshot's name and description", s)
		}
		// An approval whose snapshot no longer matches its digest lists nothing (fail closed).
		exec(t, db, `UPDATE skill_approvals SET name = 'TAMPERED' WHERE skill_uid = 12`)
		if l, r := e.As(wt.Erika).ProcessSkills(1); r.Status != 200 || len(l) != 0 {
			t.Errorf("process-skills after the snapshot was tampered = %d %+v, want an empty list", r.Status, l)
		}
	})
}
