package adr228_test

import (
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L3.1–L3.7: the subject is checked as the acting user.
func TestL3_SubjectIsCheckedAsTheActingUser(t *testing.T) {
	cases := []struct {
		name    string
		token   string
		subject map[string]any
		ok      bool
	}{
		{"the page in a mount", wt.Erika, map[string]any{"table": "pages", "uid": 1, "language": 0}, true},
		{"a default-language record in another editable language (L3.6)", wt.Erika, map[string]any{"table": "pages", "uid": 1, "language": 1}, true},
		{"a translation in its own language", wt.Erika, map[string]any{"table": "pages", "uid": 11, "language": 1}, true},
		{"a translation in another language (L3.6)", wt.Erika, map[string]any{"table": "pages", "uid": 11, "language": 0}, false},
		{"a language the user may not edit (L3.3)", wt.Otto, map[string]any{"table": "pages", "uid": 1, "language": 1}, false},
		{"an all-languages element", wt.Erika, map[string]any{"table": "tt_content", "uid": 102, "language": 1}, true},
		{"a page outside the mounts (L3.5)", wt.Erika, map[string]any{"table": "pages", "uid": 50, "language": 0}, false},
		{"a deleted record (L3.4)", wt.Erika, map[string]any{"table": "tt_content", "uid": 103, "language": 0}, false},
		{"a table the user may not read (L3.2)", wt.Erika, map[string]any{"table": "be_users", "uid": 1, "language": 0}, false},
		{"the admin outside any mount", wt.Admin, map[string]any{"table": "pages", "uid": 50, "language": 0}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db, nil)
				exec(t, db, `UPDATE be_groups SET languages = '[0, 1]'`)
				exec(t, db, `UPDATE be_users SET languages = '[0]' WHERE uid = 4`)
				exec(t, db, `INSERT INTO be_groups (uid, title, tables_select, tables_modify, languages, mounts) VALUES (9, 'Otto only', '["pages"]', '["pages"]', '[0]', '[1]')`)
				exec(t, db, `UPDATE be_users SET group_uids = '[9]' WHERE uid = 4`)
				exec(t, db, `UPDATE configurations SET allowed_groups = '[1, 9]' WHERE uid = 1`)
				exec(t, db, `INSERT INTO records (tbl, uid, pid, perms_user, perms_group, perms_everybody, owner_uid, group_uid, fields) VALUES ('pages', 50, 0, 31, 27, 1, 1, 1, '{"title":"Elsewhere"}')`)
				exec(t, db, `INSERT INTO records (tbl, uid, pid, deleted, fields) VALUES ('tt_content', 103, 1, TRUE, '{"header":"gone"}')`)
				e.LLM.Add(answer("ok"))
				st := e.As(c.token).Must("POST", "/api/runs", map[string]any{"configuration": 1,
					"messages":   []map[string]string{{"role": "user", "content": "go"}},
					"invocation": map[string]any{"skill": seoSkill, "subject": c.subject}}, 201).Map(t)
				if c.ok && st["status"] != "completed" {
					t.Fatalf("allowed subject refused: %v", st)
				}
				if !c.ok && (st["status"] != "failed" || st["refusal"] != "subject_denied") {
					t.Fatalf("refused subject answered %v", st)
				}
			})
		})
	}
}
