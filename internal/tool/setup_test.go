package tool_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"waymark/internal/access"
	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// Users of the fixture.
const (
	erika = int64(7) // editor: pages and tt_content, excluded SEO fields granted
	rudi  = int64(8) // reader: pages only, no tt_content
	anna  = int64(9) // author: pages and tt_content, no excluded fields
)

// Pages and content elements of the fixture.
const (
	pageHome        = int64(1) // erika, rudi and anna may show it
	pageSecret      = int64(2) // below Home, nobody but admins may show it
	pageHomeGerman  = int64(3) // translation of Home into language 1
	pageMissing     = int64(999)
	contentDefault  = int64(100) // on Home, language 0
	contentAll      = int64(101) // on Home, all languages
	contentGerman   = int64(102) // on Home, language 1
	contentOnSecret = int64(103)
)

type bundle struct {
	db     *store.DB
	reg    *tool.Registry
	events *[]event
}

type event struct {
	Kind    string
	Payload string // JSON
}

func exec(t *testing.T, db *store.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// setup seeds groups, users, pages and content and registers the builtins.
func setup(t *testing.T, db *store.DB) bundle {
	t.Helper()
	ctx := context.Background()
	group := `INSERT INTO be_groups (uid, title, tables_select, tables_modify, non_exclude_fields, mounts, subgroups) VALUES (?, ?, ?, ?, ?, ?, ?)`
	exec(t, db, group, 4, "Site", `["pages","tt_content"]`, `["pages","tt_content"]`, `[]`, `[1]`, `[]`)
	exec(t, db, group, 1, "Editors", `[]`, `[]`, `["pages:description","pages:seoTitle","pages:keywords"]`, `[]`, `[4]`)
	exec(t, db, group, 3, "Authors", `[]`, `[]`, `[]`, `[]`, `[4]`)
	exec(t, db, group, 2, "Readers", `["pages"]`, `[]`, `[]`, `[1]`, `[]`)
	user := `INSERT INTO be_users (uid, username, group_uids) VALUES (?, ?, ?)`
	exec(t, db, user, erika, "erika", `[1]`)
	exec(t, db, user, rudi, "rudi", `[2]`)
	exec(t, db, user, anna, "anna", `[3]`)

	recs := []content.Record{
		{Table: "pages", UID: pageHome, Group: 4, Perms: content.Perms{User: 31, Group: 31, Everybody: 1},
			Fields: map[string]string{"title": "Home", "description": "Old description", "seoTitle": ""}},
		{Table: "pages", UID: pageSecret, PID: pageHome, Group: 99, Perms: content.Perms{},
			Fields: map[string]string{"title": "Secret", "description": "hidden"}},
		{Table: "pages", UID: pageHomeGerman, Language: 1, L10nParent: pageHome, Group: 4,
			Perms:  content.Perms{User: 31, Group: 31, Everybody: 1},
			Fields: map[string]string{"title": "Startseite"}},
		{Table: "tt_content", UID: contentDefault, PID: pageHome, Fields: map[string]string{"header": "Welcome", "bodytext": "Hello"}},
		{Table: "tt_content", UID: contentAll, PID: pageHome, Language: content.LanguageAll, Fields: map[string]string{"header": "Everywhere"}},
		{Table: "tt_content", UID: contentGerman, PID: pageHome, Language: 1, L10nParent: contentDefault, Fields: map[string]string{"header": "Willkommen"}},
		{Table: "tt_content", UID: contentOnSecret, PID: pageSecret, Fields: map[string]string{"header": "Classified"}},
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

	checker := access.NewChecker(db, nil, nil)
	writer := content.NewWriter(db, nil, checker, clock.NewFake(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)))
	reg := tool.NewRegistry(db, nil)
	if err := tool.RegisterBuiltins(reg, db, nil, nil, writer, checker); err != nil {
		t.Fatalf("RegisterBuiltins: %v", err)
	}
	return bundle{db: db, reg: reg, events: &[]event{}}
}

// call builds a call by user with args, recording emitted events in b.events.
func (b bundle) call(t *testing.T, user int64, args string) tool.Call {
	t.Helper()
	return tool.Call{Run: "run-1", User: user, Args: json.RawMessage(args), Emit: func(kind string, payload any) error {
		raw, err := json.Marshal(payload)
		if err != nil {
			return err
		}
		*b.events = append(*b.events, event{Kind: kind, Payload: string(raw)})
		return nil
	}}
}

// execute runs name through the registry and fails the test on an infrastructure error.
func (b bundle) execute(t *testing.T, name string, user int64, args string) tool.Result {
	t.Helper()
	res, err := b.reg.Execute(context.Background(), name, b.call(t, user, args))
	if err != nil {
		t.Fatalf("Execute(%s, %s) error: %v", name, args, err)
	}
	return res
}

// asJSON renders a result's content for comparisons.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(raw)
}

// decode turns a result's content into a generic JSON object.
func decode(t *testing.T, v any) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(asJSON(t, v)), &m); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return m
}

// errorText returns the "error" of an error result, failing when res is none.
func errorText(t *testing.T, res tool.Result) string {
	t.Helper()
	if !res.IsError {
		t.Fatalf("result %s is not an error result", asJSON(t, res.Content))
	}
	return decode(t, res.Content)["error"].(string)
}

// record reads a record's current fields.
func record(t *testing.T, db *store.DB, table string, uid int64) content.Record {
	t.Helper()
	r, err := content.Builtin{}.Get(context.Background(), db, table, uid)
	if err != nil {
		t.Fatalf("Get(%s, %d): %v", table, uid, err)
	}
	return r
}
