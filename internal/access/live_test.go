package access_test

import (
	"context"
	"testing"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// TestCheckerReadsUserAsStoredNow guards DESIGN.md §6 invariant 5: one
// Checker answers from the user, groups and subgroups as stored at each call,
// so a demotion between two checks changes the second answer.
func TestCheckerReadsUserAsStoredNow(t *testing.T) {
	t.Parallel()
	steps := []struct {
		name    string
		change  string // SQL run before the answers are checked; "" for none
		answers []answer
	}{
		{"before", "", []answer{
			{admin, write("tt_content", ceRoot, "header"), true},
			{admin, showPage(pageOtherRoot), true},
			{editor, modifyTable("tt_content"), true},
			{editor, editContent(pageAbout), true},
			{editor, write("tt_content", ceDefault, "header"), true},
			{seoEditor, editField("pages", "description"), true},
			{seoEditor, write("pages", pageAbout, "description"), true},
			{lang0Editor, write("tt_content", ceGerman, "header"), false},
		}},
		{"admin demoted to editor", "UPDATE be_users SET admin = FALSE, group_uids = '[1]' WHERE uid = 1", []answer{
			{admin, write("tt_content", ceRoot, "header"), false},
			{admin, showPage(pageOtherRoot), false},
			{admin, showPage(pageAbout), true},
		}},
		{"subgroup removed", "UPDATE be_groups SET subgroups = '[]' WHERE uid = 1", []answer{
			{editor, modifyTable("tt_content"), false},
			{editor, modifyTable("pages"), true},
			{editor, editContent(pageAbout), false},
			{editor, write("tt_content", ceDefault, "header"), false},
			{seoEditor, modifyTable("tt_content"), false},
		}},
		{"grant withdrawn", "UPDATE be_groups SET non_exclude_fields = '[]' WHERE uid = 3", []answer{
			{seoEditor, editField("pages", "description"), false},
			{seoEditor, write("pages", pageAbout, "description"), false},
		}},
		{"language restriction lifted", "UPDATE be_users SET group_uids = '[1]' WHERE uid = 4", []answer{
			{lang0Editor, editLanguage(1), true},
			{lang0Editor, write("pages", pageAboutDE, "title"), true},
		}},
		{"groups removed", "UPDATE be_users SET group_uids = '[]' WHERE uid = 2", []answer{
			{editor, readTable("pages"), false},
			{editor, inMount(pageAbout), false},  // the mount came with group 1
			{editor, showPage(pageOwner), false}, // still the owner, but outside every mount
		}},
		{"disabled", "UPDATE be_users SET disabled = TRUE WHERE uid = 3", []answer{
			{seoEditor, readTable("pages"), false},
			{seoEditor, write("pages", pageAbout, "title"), false},
		}},
		{"promoted", "UPDATE be_users SET admin = TRUE WHERE uid = 5", []answer{
			{otherEditor, write("tt_content", ceRoot, "header"), true},
			{otherEditor, write("pages", pageAbout, "description"), true},
		}},
		{"deleted user", "DELETE FROM be_users WHERE uid = 5", []answer{
			{otherEditor, readTable("pages"), false},
			{otherEditor, write("tt_content", ceOther, "header"), false},
		}},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		seed(t, db)
		ctx := context.Background()
		c := access.NewChecker(db, nil, nil) // one checker for every step: nothing may be cached
		for _, s := range steps {
			if s.change != "" {
				if _, err := db.Exec(ctx, s.change); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
			}
			for _, a := range s.answers {
				got, err := a.q.ask(ctx, c, db, a.user)
				if err != nil || got != a.want {
					t.Errorf("%s: user %d: %s = %v, %v; want %v", s.name, a.user, a.q.desc, got, err, a.want)
				}
			}
		}
	})
}

// TestCheckerFailsClosedOnUnreadableUser: a user row that does not decode
// refuses every check with an error instead of answering from half a user.
func TestCheckerFailsClosedOnUnreadableUser(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		seed(t, db)
		ctx := context.Background()
		if _, err := db.Exec(ctx, "UPDATE be_users SET group_uids = 'not json' WHERE uid = ?", editor); err != nil {
			t.Fatal(err)
		}
		c := access.NewChecker(db, nil, nil)
		if ok, err := c.CanReadTable(ctx, editor, "pages"); ok || err == nil {
			t.Errorf("CanReadTable = %v, %v; want false and an error", ok, err)
		}
		if ok, err := c.MayShowPage(ctx, editor, pageAbout); ok || err == nil {
			t.Errorf("MayShowPage = %v, %v; want false and an error", ok, err)
		}
		rec, err := content.Builtin{}.Get(ctx, db, "tt_content", ceDefault)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AuthorizeWrite(ctx, db, editor, rec, []string{"header"}); err == nil {
			t.Error("AuthorizeWrite = nil, want an error")
		}
	})
}

// TestCheckerPageCycleFailsClosed: a page tree with a cycle is never in a mount.
func TestCheckerPageCycleFailsClosed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		seed(t, db)
		ctx := context.Background()
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, r := range []content.Record{
				{Table: "pages", UID: 30, PID: 31, Group: 1, Perms: content.Perms{Group: 27}},
				{Table: "pages", UID: 31, PID: 30, Group: 1, Perms: content.Perms{Group: 27}},
			} {
				if err := content.PutTx(ctx, tx, r, 1); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		c := access.NewChecker(db, nil, nil)
		for _, p := range []int64{30, 31} {
			if ok, err := c.IsInWebMount(ctx, editor, p); ok || err != nil {
				t.Errorf("IsInWebMount(%d) = %v, %v; want false, nil", p, ok, err)
			}
			if ok, err := c.MayShowPage(ctx, editor, p); ok || err != nil {
				t.Errorf("MayShowPage(%d) = %v, %v; want false, nil", p, ok, err)
			}
		}
	})
}
