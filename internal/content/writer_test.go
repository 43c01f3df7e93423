package content_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"waymark/internal/access"
	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Users of the writer fixture.
const (
	admin    int64 = 1
	editor   int64 = 2 // group 1: pages and tt_content, mount 1, no grant for excluded fields
	seo      int64 = 3 // group 2 (→ subgroup 1): grant on pages:description
	disabled int64 = 4 // group 1, disabled
)

// Records of the writer fixture.
const (
	pageRoot    int64 = 1
	pageAbout   int64 = 2
	ceText      int64 = 10 // on page 2
	ceDeleted   int64 = 11 // on page 2, deleted
	ceWorkspace int64 = 12 // on page 2, workspace 1
	ceRoot      int64 = 13 // pid 0: root level
)

var epoch = time.Date(2026, 10, 9, 12, 0, 0, 0, time.UTC)

type bundle struct {
	db     *store.DB
	clock  *clock.Fake
	writer *content.Writer
}

// setup seeds users, groups, two pages and three content elements and
// returns a writer checking with access.Checker at a fake time.
func setup(t *testing.T, db *store.DB) bundle {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO be_groups (uid, title, tables_select, tables_modify, mounts, subgroups) VALUES (1, 'Editors', '["pages","tt_content"]', '["pages","tt_content"]', '[1]', '[]')`,
		`INSERT INTO be_groups (uid, title, non_exclude_fields, subgroups) VALUES (2, 'SEO', '["pages:description"]', '[1]')`,
		`INSERT INTO be_users (uid, username, admin, group_uids) VALUES (1, 'admin', TRUE, '[]')`,
		`INSERT INTO be_users (uid, username, group_uids) VALUES (2, 'editor', '[1]')`,
		`INSERT INTO be_users (uid, username, group_uids) VALUES (3, 'seo', '[2]')`,
		`INSERT INTO be_users (uid, username, group_uids, disabled) VALUES (4, 'disabled', '[1]', TRUE)`,
	} {
		if _, err := db.Exec(ctx, q); err != nil {
			t.Fatalf("seed %q: %v", q, err)
		}
	}
	full := content.Perms{User: 31, Group: 27}
	recs := []content.Record{
		{Table: "pages", UID: pageRoot, Group: 1, Perms: full, Fields: map[string]string{"title": "Home"}},
		{Table: "pages", UID: pageAbout, PID: pageRoot, Group: 1, Perms: full,
			Fields: map[string]string{"title": "About", "description": "Old description"}},
		{Table: "tt_content", UID: ceText, PID: pageAbout, Fields: map[string]string{"header": "Hello", "bodytext": "Body"}},
		{Table: "tt_content", UID: ceDeleted, PID: pageAbout, Deleted: true, Fields: map[string]string{"header": "Gone"}},
		{Table: "tt_content", UID: ceWorkspace, PID: pageAbout, Workspace: 1, Fields: map[string]string{"header": "Draft"}},
		{Table: "tt_content", UID: ceRoot, Fields: map[string]string{"header": "Root"}},
	}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, r := range recs {
			if err := content.PutTx(ctx, tx, r, 1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seed records: %v", err)
	}
	clk := clock.NewFake(epoch)
	return bundle{db: db, clock: clk, writer: content.NewWriter(db, nil, access.NewChecker(db, nil, nil), clk)}
}

// snapshot is every record's stored fields and update time plus the history, as text.
func snapshot(t *testing.T, db *store.DB) string {
	t.Helper()
	ctx := context.Background()
	rows, err := db.Query(ctx, "SELECT tbl, uid, fields, updated_at FROM records ORDER BY tbl, uid")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := ""
	for rows.Next() {
		var tbl, fields string
		var uid, at int64
		if err := rows.Scan(&tbl, &uid, &fields, &at); err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("%s:%d %s @%d\n", tbl, uid, fields, at)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM record_history").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return out + fmt.Sprintf("history rows: %d\n", n)
}

func fieldsOf(t *testing.T, db *store.DB, table string, uid int64) map[string]string {
	t.Helper()
	r, err := content.Builtin{}.Get(context.Background(), db, table, uid)
	if err != nil {
		t.Fatalf("Get(%s:%d): %v", table, uid, err)
	}
	return r.Fields
}

func history(t *testing.T, db *store.DB, table string, uid int64) []content.HistoryEntry {
	t.Helper()
	h, err := content.History(context.Background(), db, table, uid)
	if err != nil {
		t.Fatalf("History(%s:%d): %v", table, uid, err)
	}
	return h
}

func TestWriteChangesFieldsAndRecordsHistory(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		got, err := b.writer.Write(ctx, content.WriteRequest{
			Table: "pages", UID: pageAbout, User: seo, Run: "run-1",
			Fields: map[string]string{"title": "About us", "description": "New description", "abstract": ""},
		})
		if err != nil {
			t.Fatalf("Write: %v", err)
		}
		want := content.Written{Table: "pages", UID: pageAbout, Changes: []content.Change{
			{Field: "description", Old: "Old description", New: "New description"},
			{Field: "title", Old: "About", New: "About us"},
		}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Write = %+v, want %+v (abstract stayed empty: no change)", got, want)
		}
		if f := fieldsOf(t, db, "pages", pageAbout); f["title"] != "About us" || f["description"] != "New description" {
			t.Errorf("stored fields = %v, want the new title and description", f)
		}
		at := store.Micros(epoch)
		wantHist := []content.HistoryEntry{
			{Field: "description", Old: "Old description", New: "New description", User: seo, Run: "run-1", At: at},
			{Field: "title", Old: "About", New: "About us", User: seo, Run: "run-1", At: at},
		}
		if h := history(t, db, "pages", pageAbout); !reflect.DeepEqual(h, wantHist) {
			t.Errorf("History = %+v, want %+v", h, wantHist)
		}
		var updated int64
		if err := db.QueryRow(ctx, "SELECT updated_at FROM records WHERE tbl = 'pages' AND uid = ?", pageAbout).Scan(&updated); err != nil || updated != at {
			t.Errorf("updated_at = %d, %v; want %d", updated, err, at)
		}

		// A later write by another user, without a run, is appended after it.
		b.clock.Advance(time.Minute)
		got, err = b.writer.Write(ctx, content.WriteRequest{Table: "tt_content", UID: ceText, User: editor,
			Fields: map[string]string{"header": "Hello world", "bodytext": "Body"}})
		if err != nil {
			t.Fatalf("second Write: %v", err)
		}
		if want := []content.Change{{Field: "header", Old: "Hello", New: "Hello world"}}; !reflect.DeepEqual(got.Changes, want) {
			t.Errorf("second Write changes = %+v, want %+v", got.Changes, want)
		}
		wantCE := []content.HistoryEntry{{Field: "header", Old: "Hello", New: "Hello world", User: editor, At: store.Micros(epoch.Add(time.Minute))}}
		if h := history(t, db, "tt_content", ceText); !reflect.DeepEqual(h, wantCE) {
			t.Errorf("History(tt_content) = %+v, want %+v", h, wantCE)
		}
		if f := fieldsOf(t, db, "tt_content", ceText); f["bodytext"] != "Body" {
			t.Errorf("bodytext = %q, want it untouched", f["bodytext"])
		}
	})
}

// A record read with ReadLockedTx and handed to the write in the same
// transaction is not read again; one read in another transaction is no
// stand-in: the writer reads the record as it is now, and records the
// change over the value stored now.
func TestAWriteTakesTheLockedRecordOnlyOfItsOwnTransaction(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		write := func(header string, lock bool, locked *content.Locked) (*content.Locked, int64) {
			t.Helper()
			var n int64
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				if lock {
					l, err := b.writer.ReadLockedTx(ctx, tx, "tt_content", ceText)
					if err != nil {
						return err
					}
					locked = l
				}
				before := db.Statements()
				_, err := b.writer.WriteTx(ctx, tx, content.WriteRequest{Table: "tt_content", UID: ceText, User: editor,
					Fields: map[string]string{"header": header}, Locked: locked})
				n = db.Statements() - before
				return err
			}); err != nil {
				t.Fatal(err)
			}
			b.clock.Advance(time.Minute)
			return locked, n
		}
		_, plain := write("Hello world", false, nil)
		l, withLock := write("Hello again", true, nil)
		if withLock != plain-1 {
			t.Errorf("a write handed its locked record ran %d statements, one without it %d: want one fewer (no read of the record)", withLock, plain)
		}
		if r := l.Record(); r.Fields["header"] != "Hello world" {
			t.Errorf("locked read header = %q, want Hello world", r.Fields["header"])
		}
		write("Hello at last", false, l) // l is of the previous transaction
		h := history(t, db, "tt_content", ceText)
		if len(h) != 3 || h[2].Old != "Hello again" || h[2].New != "Hello at last" {
			t.Errorf("history = %+v, want the third change over Hello again (as stored), not over the stale Hello world", h)
		}
		if f := fieldsOf(t, db, "tt_content", ceText); f["header"] != "Hello at last" {
			t.Errorf("header = %q, want Hello at last", f["header"])
		}
	})
}

func TestWriteOfUnchangedValuesRecordsNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		before := snapshot(t, db)
		b.clock.Advance(time.Hour)
		got, err := b.writer.Write(context.Background(), content.WriteRequest{Table: "tt_content", UID: ceText, User: editor,
			Fields: map[string]string{"header": "Hello", "bodytext": "Body", "subheader": ""}})
		if err != nil {
			t.Fatalf("Write: %v", err)
		}
		if want := (content.Written{Table: "tt_content", UID: ceText, Changes: []content.Change{}}); !reflect.DeepEqual(got, want) {
			t.Errorf("Write = %+v, want %+v", got, want)
		}
		if after := snapshot(t, db); after != before {
			t.Errorf("an unchanged write changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
}

func TestWriteRefusesAndChangesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  content.WriteRequest
		want error
	}{
		{"unknown table", content.WriteRequest{Table: "be_users", UID: 1, User: admin, Fields: map[string]string{"title": "x"}}, content.ErrInvalid},
		{"unknown field", content.WriteRequest{Table: "tt_content", UID: ceText, User: admin, Fields: map[string]string{"header": "x", "nosuch": "y"}}, content.ErrInvalid},
		{"no fields", content.WriteRequest{Table: "tt_content", UID: ceText, User: admin, Fields: map[string]string{}}, content.ErrInvalid},
		{"nil fields", content.WriteRequest{Table: "tt_content", UID: ceText, User: admin}, content.ErrInvalid},
		{"missing record", content.WriteRequest{Table: "tt_content", UID: 999, User: admin, Fields: map[string]string{"header": "x"}}, content.ErrNotFound},
		{"excluded field without grant", content.WriteRequest{Table: "pages", UID: pageAbout, User: editor, Fields: map[string]string{"title": "x", "description": "y"}}, access.ErrDenied},
		{"disabled user", content.WriteRequest{Table: "tt_content", UID: ceText, User: disabled, Fields: map[string]string{"header": "x"}}, access.ErrDenied},
		{"root-level record for editor", content.WriteRequest{Table: "tt_content", UID: ceRoot, User: editor, Fields: map[string]string{"header": "x"}}, access.ErrDenied},
		{"unknown user", content.WriteRequest{Table: "tt_content", UID: ceText, User: 99, Fields: map[string]string{"header": "x"}}, access.ErrDenied},
		{"deleted record, even for admin", content.WriteRequest{Table: "tt_content", UID: ceDeleted, User: admin, Fields: map[string]string{"header": "x"}}, access.ErrDenied},
		{"workspace record, even for admin", content.WriteRequest{Table: "tt_content", UID: ceWorkspace, User: admin, Fields: map[string]string{"header": "x"}}, access.ErrDenied},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		before := snapshot(t, db)
		for _, tt := range tests {
			got, err := b.writer.Write(context.Background(), tt.req)
			if !errors.Is(err, tt.want) {
				t.Errorf("%s: Write = %+v, %v; want error %v", tt.name, got, err, tt.want)
			}
			if after := snapshot(t, db); after != before {
				t.Fatalf("%s: a refused write changed the store:\nbefore:\n%s\nafter:\n%s", tt.name, before, after)
			}
		}
	})
}

// GetWithOnPage reads in one statement what Get and OnPage read in two.
func TestGetWithOnPageReadsThePageAndItsRecordsAsGetAndOnPage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		setup(t, db)
		ctx := context.Background()
		var b content.Builtin
		for _, langs := range [][]int64{{0, content.LanguageAll}, nil} {
			for _, uid := range []int64{pageRoot, pageAbout} {
				before := db.Statements()
				page, on, err := b.GetWithOnPage(ctx, db, "pages", uid, "tt_content", langs...)
				if err != nil {
					t.Fatalf("GetWithOnPage(%d, %v): %v", uid, langs, err)
				}
				if n := db.Statements() - before; n != 1 {
					t.Errorf("GetWithOnPage ran %d statements, want 1", n)
				}
				wantPage, err := b.Get(ctx, db, "pages", uid)
				if err != nil {
					t.Fatal(err)
				}
				wantOn, err := b.OnPage(ctx, db, "tt_content", uid, langs...)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(page, wantPage) || !reflect.DeepEqual(on, wantOn) {
					t.Errorf("GetWithOnPage(%d, %v) = %+v, %+v; want (Get, OnPage) %+v, %+v", uid, langs, page, on, wantPage, wantOn)
				}
			}
		}
		if _, _, err := b.GetWithOnPage(ctx, db, "pages", 999, "tt_content"); !errors.Is(err, content.ErrNotFound) {
			t.Errorf("GetWithOnPage(missing) = %v, want ErrNotFound", err)
		}
	})
}
