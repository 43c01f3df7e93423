package openpoint

import (
	"context"
	"fmt"
	"testing"
	"time"

	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/store"
)

// Users of the open point fixture.
const (
	opAdmin = int64(1)  // administrator
	opErika = int64(7)  // editor: pages and tt_content, description and seoTitle granted, backend en
	opRudi  = int64(8)  // reader: pages only
	opAnna  = int64(9)  // author: pages and tt_content, no excluded field
	opOtto  = int64(10) // editor restricted to language 0
	opHans  = int64(11) // editor like erika, backend de
	opOff   = int64(12) // disabled editor
)

// Pages, content elements and skills of the fixture.
const (
	opHome       = int64(1) // everybody may show it; description empty, seoTitle set
	opSecret     = int64(2) // below Home, nobody but admins may show it
	opHomeGerman = int64(3) // translation of Home into language 1, "Startseite"
	opOutside    = int64(5) // root level, outside every mount
	opAbout      = int64(6) // below Home, showable
	opMissing    = int64(999)

	opWelcome    = int64(100) // on Home, language 0
	opWillkommen = int64(102) // on Home, language 1
	opClassified = int64(103) // on Secret
	opFar        = int64(104) // on Outside

	opSEO = int64(1) // skill "seo-optimieren"
	opAlt = int64(2) // skill "alt-texte"
)

var opStart = time.Date(2026, 10, 9, 12, 0, 0, 0, time.UTC)

func opExec(t testing.TB, db *store.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// opSetup seeds groups, users, pages, content and skills and returns the open points with a fake clock.
func opSetup(t *testing.T, db *store.DB) (*Store, *clock.Fake) {
	t.Helper()
	ctx := context.Background()
	group := `INSERT INTO be_groups (uid, title, tables_select, tables_modify, non_exclude_fields, languages, mounts, subgroups) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	opExec(t, db, group, 4, "Site", `["pages","tt_content"]`, `["pages","tt_content"]`, `[]`, `[]`, `[1]`, `[]`)
	opExec(t, db, group, 1, "Editors", `[]`, `[]`, `["pages:description","pages:seoTitle"]`, `[]`, `[]`, `[4]`)
	opExec(t, db, group, 3, "Authors", `[]`, `[]`, `[]`, `[]`, `[]`, `[4]`)
	opExec(t, db, group, 2, "Readers", `["pages"]`, `[]`, `[]`, `[]`, `[1]`, `[]`)
	opExec(t, db, group, 5, "English", `[]`, `[]`, `["pages:description","pages:seoTitle"]`, `[0]`, `[]`, `[4]`)
	user := `INSERT INTO be_users (uid, username, admin, disabled, backend_language, group_uids) VALUES (?, ?, ?, ?, ?, ?)`
	opExec(t, db, user, opAdmin, "admin", true, false, "en", `[]`)
	opExec(t, db, user, opErika, "erika", false, false, "en", `[1]`)
	opExec(t, db, user, opRudi, "rudi", false, false, "en", `[2]`)
	opExec(t, db, user, opAnna, "anna", false, false, "en", `[3]`)
	opExec(t, db, user, opOtto, "otto", false, false, "en", `[5]`)
	opExec(t, db, user, opHans, "hans", false, false, "de", `[1]`)
	opExec(t, db, user, opOff, "off", false, true, "en", `[1]`)
	opExec(t, db, `INSERT INTO skill_sources (uid, type, title, trust_level) VALUES (1, 'backend', 'Backend', 'first_party')`)
	skill := `INSERT INTO skills (uid, source_uid, identifier, name, digest) VALUES (?, 1, ?, ?, 'd')`
	opExec(t, db, skill, opSEO, "seo-optimieren", "SEO optimieren")
	opExec(t, db, skill, opAlt, "alt-texte", "Alt-Texte")

	show := content.Perms{User: 31, Group: 31, Everybody: 1}
	recs := []content.Record{
		{Table: "pages", UID: opHome, Group: 4, Perms: show,
			Fields: map[string]string{"title": "Home", "description": "", "seoTitle": "Home | Site", "keywords": "k"}},
		{Table: "pages", UID: opSecret, PID: opHome, Group: 99, Fields: map[string]string{"title": "Secret"}},
		{Table: "pages", UID: opHomeGerman, Language: 1, L10nParent: opHome, Group: 4, Perms: show,
			Fields: map[string]string{"title": "Startseite"}},
		{Table: "pages", UID: opOutside, Perms: show, Fields: map[string]string{"title": "Outside", "description": "x"}},
		{Table: "pages", UID: opAbout, PID: opHome, Perms: show, Fields: map[string]string{"title": "About", "description": "About us"}},
		{Table: "tt_content", UID: opWelcome, PID: opHome, Fields: map[string]string{"header": "Welcome", "bodytext": "Hello"}},
		{Table: "tt_content", UID: opWillkommen, PID: opHome, Language: 1, L10nParent: opWelcome,
			Fields: map[string]string{"header": "Willkommen", "bodytext": ""}},
		{Table: "tt_content", UID: opClassified, PID: opSecret, Fields: map[string]string{"header": "Classified"}},
		{Table: "tt_content", UID: opFar, PID: opOutside, Fields: map[string]string{"header": "Far"}},
	}
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, r := range recs {
			if err := content.PutTx(ctx, tx, r, 1); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("seed records: %v", err)
	}
	clk := clock.NewFake(opStart)
	return New(db, nil, nil, clk), clk
}

// opRows lists the stored open points as "skill page table:uid field lang created", oldest first.
func opRows(t *testing.T, db *store.DB) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT "+pointColumns+" FROM open_points ORDER BY created_at, id")
	if err != nil {
		t.Fatalf("read open_points: %v", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		p, err := scanPoint(rows)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %d %s:%d %q %d %s", p.Skill, p.Page, p.Table, p.UID, p.Field, p.Language,
			p.CreatedAt.Format("15:04")))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// opRecord records a skip and fails the test on an error.
func opRecord(t *testing.T, o *Store, skill, page int64, table string, uid int64, fields ...string) {
	t.Helper()
	if err := o.RecordSkip(context.Background(), skill, page, Target{Table: table, UID: uid, Fields: fields}); err != nil {
		t.Fatalf("RecordSkip(%d, %d, %s:%d %v): %v", skill, page, table, uid, fields, err)
	}
}

// idents renders visible points as "table:uid field" for comparisons.
func idents(points []Entry) []string {
	out := []string{}
	for _, p := range points {
		out = append(out, fmt.Sprintf("%s:%d %s", p.Table, p.UID, p.Field))
	}
	return out
}
