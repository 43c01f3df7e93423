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
		subject wt.Subject
		ok      bool
	}{
		{"the page in a mount", wt.Erika, wt.Subject{Table: "pages", UID: 1, Language: 0}, true},
		{"a default-language record in another editable language (L3.6)", wt.Erika, wt.Subject{Table: "pages", UID: 1, Language: 1}, true},
		{"a translation in its own language", wt.Erika, wt.Subject{Table: "pages", UID: 11, Language: 1}, true},
		{"a translation in another language (L3.6)", wt.Erika, wt.Subject{Table: "pages", UID: 11, Language: 0}, false},
		{"a language the user may not edit (L3.3)", wt.Otto, wt.Subject{Table: "pages", UID: 1, Language: 1}, false},
		{"an all-languages element", wt.Erika, wt.Subject{Table: "tt_content", UID: 102, Language: 1}, true},
		{"a page outside the mounts (L3.5)", wt.Erika, wt.Subject{Table: "pages", UID: 50, Language: 0}, false},
		{"a deleted record (L3.4)", wt.Erika, wt.Subject{Table: "tt_content", UID: 103, Language: 0}, false},
		{"a table the user may not read (L3.2)", wt.Erika, wt.Subject{Table: "be_users", UID: 1, Language: 0}, false},
		{"the admin outside any mount", wt.Admin, wt.Subject{Table: "pages", UID: 50, Language: 0}, true},
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
				st := started(t, e.As(c.token), wt.StartRun{Configuration: 1, Messages: []wt.Message{{Role: "user", Content: "go"}},
					Invocation: &wt.Invocation{Skill: seoSkill, Subject: &c.subject}})
				if c.ok && st.Status != "completed" {
					t.Fatalf("allowed subject refused: %+v", st)
				}
				if !c.ok && (st.Status != "failed" || st.Refusal != "subject_denied") {
					t.Fatalf("refused subject answered %+v", st)
				}
			})
		})
	}
}
