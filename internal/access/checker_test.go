package access_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Users of the fixture.
const (
	admin        int64 = 1 // administrator, no groups
	editor       int64 = 2 // group 1 (→ subgroup 2), mount 1, every language, owns page 4
	seoEditor    int64 = 3 // group 3 (→ subgroup 1 → 2): grant on pages:description
	lang0Editor  int64 = 4 // groups 1 and 4: language 0 only
	otherEditor  int64 = 5 // group 5: mount 20 (another branch)
	disabledUser int64 = 6 // like editor, but disabled
	disabledAdm  int64 = 7 // administrator, but disabled
	nobody       int64 = 99
)

// Pages of the fixture.
const (
	pageRoot       int64 = 1  // pid 0, group 1 may show, edit, add content
	pageAbout      int64 = 2  // under 1, group 1 full
	pageShowOnly   int64 = 3  // under 1, group 1 may only show
	pageOwner      int64 = 4  // under 1, owner editor only
	pageEverybody  int64 = 5  // under 1, everybody may show
	pageAboutDE    int64 = 6  // translation of 2 into language 1
	pageDeleted    int64 = 7  // under 1, deleted
	pageWorkspace  int64 = 8  // under 1, workspace 1 version
	pageUnderDel   int64 = 9  // under the deleted page 7, live itself
	pageOtherRoot  int64 = 20 // pid 0, group 5 full; not in mount 1
	pageOtherChild int64 = 21 // under 20
)

// Content elements of the fixture.
const (
	ceDefault   int64 = 100 // page 2, language 0
	ceGerman    int64 = 101 // page 2, language 1, translation of 100
	ceAll       int64 = 102 // page 2, all languages
	ceRoot      int64 = 103 // pid 0: root level
	ceDeleted   int64 = 104 // page 2, deleted
	ceWorkspace int64 = 105 // page 2, workspace 1
	ceOther     int64 = 106 // page 20, other branch
	ceOnDelPage int64 = 107 // on the deleted page 7
	ceShowOnly  int64 = 108 // page 3: show only for group 1
)

// seed stores the permission fixture: groups with subgroups, users, a page
// tree with a translation, a deleted and a workspace page, a second branch,
// and content elements in languages 0, 1 and -1, one on the root level.
func seed(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(ctx, q, args...); err != nil {
			t.Fatalf("seed %q: %v", q, err)
		}
	}
	group := `INSERT INTO be_groups (uid, title, tables_select, tables_modify, non_exclude_fields, languages, mounts, subgroups)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	exec(group, 1, "Editors", `["pages","tt_content"]`, `["pages"]`, `[]`, `[]`, `[1]`, `[2]`)
	exec(group, 2, "Content (subgroup only)", `[]`, `["tt_content"]`, `[]`, `[]`, `[]`, `[]`)
	exec(group, 3, "SEO", `[]`, `[]`, `["pages:description"]`, `[]`, `[]`, `[1]`)
	exec(group, 4, "Language 0", `[]`, `[]`, `[]`, `[0]`, `[]`, `[]`)
	exec(group, 5, "Other branch", `["pages","tt_content"]`, `["pages","tt_content"]`, `[]`, `[]`, `[20]`, `[]`)

	user := `INSERT INTO be_users (uid, username, admin, disabled, group_uids) VALUES (?, ?, ?, ?, ?)`
	exec(user, admin, "admin", true, false, `[]`)
	exec(user, editor, "editor", false, false, `[1]`)
	exec(user, seoEditor, "seo", false, false, `[3]`)
	exec(user, lang0Editor, "lang0", false, false, `[1,4]`)
	exec(user, otherEditor, "other", false, false, `[5]`)
	exec(user, disabledUser, "disabled", false, true, `[1]`)
	exec(user, disabledAdm, "disabledadmin", true, true, `[]`)

	full := content.Perms{User: 31, Group: 27}
	recs := []content.Record{
		{Table: "pages", UID: pageRoot, PID: 0, Group: 1, Perms: full},
		{Table: "pages", UID: pageAbout, PID: pageRoot, Group: 1, Perms: full},
		{Table: "pages", UID: pageShowOnly, PID: pageRoot, Group: 1, Perms: content.Perms{Group: content.PermShow}},
		{Table: "pages", UID: pageOwner, PID: pageRoot, Owner: editor, Perms: content.Perms{User: 31}},
		{Table: "pages", UID: pageEverybody, PID: pageRoot, Perms: content.Perms{Everybody: content.PermShow}},
		{Table: "pages", UID: pageAboutDE, PID: pageRoot, Language: 1, L10nParent: pageAbout, Group: 1, Perms: full},
		{Table: "pages", UID: pageDeleted, PID: pageRoot, Deleted: true, Group: 1, Perms: full},
		{Table: "pages", UID: pageWorkspace, PID: pageRoot, Workspace: 1, Group: 1, Perms: full},
		{Table: "pages", UID: pageUnderDel, PID: pageDeleted, Group: 1, Perms: full},
		{Table: "pages", UID: pageOtherRoot, PID: 0, Group: 5, Perms: full},
		{Table: "pages", UID: pageOtherChild, PID: pageOtherRoot, Group: 5, Perms: full},
		{Table: "tt_content", UID: ceDefault, PID: pageAbout},
		{Table: "tt_content", UID: ceGerman, PID: pageAbout, Language: 1, L10nParent: ceDefault},
		{Table: "tt_content", UID: ceAll, PID: pageAbout, Language: content.LanguageAll},
		{Table: "tt_content", UID: ceRoot, PID: 0},
		{Table: "tt_content", UID: ceDeleted, PID: pageAbout, Deleted: true},
		{Table: "tt_content", UID: ceWorkspace, PID: pageAbout, Workspace: 1},
		{Table: "tt_content", UID: ceOther, PID: pageOtherRoot},
		{Table: "tt_content", UID: ceOnDelPage, PID: pageDeleted},
		{Table: "tt_content", UID: ceShowOnly, PID: pageShowOnly},
	}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, r := range recs {
			r.Fields = map[string]string{"title": fmt.Sprintf("%s %d", r.Table, r.UID)}
			if err := content.PutTx(ctx, tx, r, 1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seed records: %v", err)
	}
}

// check is one question put to a Checker.
type check struct {
	desc string
	ask  func(ctx context.Context, c *access.Checker, db *store.DB, uid int64) (bool, error)
}

func readTable(table string) check {
	return check{"CanReadTable(" + table + ")", func(ctx context.Context, c *access.Checker, _ *store.DB, uid int64) (bool, error) {
		return c.CanReadTable(ctx, uid, table)
	}}
}

func modifyTable(table string) check {
	return check{"CanModifyTable(" + table + ")", func(ctx context.Context, c *access.Checker, _ *store.DB, uid int64) (bool, error) {
		return c.CanModifyTable(ctx, uid, table)
	}}
}

func editField(table, field string) check {
	return check{"MayEditField(" + table + "." + field + ")", func(ctx context.Context, c *access.Checker, _ *store.DB, uid int64) (bool, error) {
		return c.MayEditField(ctx, uid, table, field)
	}}
}

func editLanguage(lang int64) check {
	return check{fmt.Sprintf("MayEditLanguage(%d)", lang), func(ctx context.Context, c *access.Checker, _ *store.DB, uid int64) (bool, error) {
		return c.MayEditLanguage(ctx, uid, lang)
	}}
}

func inMount(page int64) check {
	return check{fmt.Sprintf("IsInWebMount(%d)", page), func(ctx context.Context, c *access.Checker, _ *store.DB, uid int64) (bool, error) {
		return c.IsInWebMount(ctx, uid, page)
	}}
}

func showPage(page int64) check {
	return check{fmt.Sprintf("MayShowPage(%d)", page), func(ctx context.Context, c *access.Checker, _ *store.DB, uid int64) (bool, error) {
		return c.MayShowPage(ctx, uid, page)
	}}
}

// showPageRecord asks ActorMayShowPageRecord with the page as read (a
// missing page is not shown).
func showPageRecord(page int64) check {
	return check{fmt.Sprintf("ActorMayShowPageRecord(%d)", page), func(ctx context.Context, c *access.Checker, db *store.DB, uid int64) (bool, error) {
		rec, err := content.Builtin{}.Get(ctx, db, "pages", page)
		if errors.Is(err, content.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		a, err := c.Actor(ctx, uid)
		if err != nil || a == nil {
			return false, err
		}
		return c.ActorMayShowPageRecord(ctx, a, rec)
	}}
}

// fixturePages are every page of the fixture, and uids that name none.
var fixturePages = []int64{-1, 0, pageRoot, pageAbout, pageShowOnly, pageOwner, pageEverybody, pageAboutDE, pageDeleted,
	pageWorkspace, pageUnderDel, pageOtherRoot, pageOtherChild, 999}

// showPageInBatch asks MayShowPages for every page of the fixture at once and
// answers for page.
func showPageInBatch(page int64) check {
	return check{fmt.Sprintf("MayShowPages(…%d…)", page), func(ctx context.Context, c *access.Checker, _ *store.DB, uid int64) (bool, error) {
		a, err := c.Actor(ctx, uid)
		if err != nil {
			return false, err
		}
		shown, err := c.MayShowPages(ctx, a, fixturePages)
		if err != nil {
			return false, err
		}
		got, ok := shown[page]
		if !ok {
			return false, fmt.Errorf("MayShowPages has no answer for page %d", page)
		}
		return got, nil
	}}
}

func editContent(page int64) check {
	return check{fmt.Sprintf("MayEditContentOnPage(%d)", page), func(ctx context.Context, c *access.Checker, _ *store.DB, uid int64) (bool, error) {
		return c.MayEditContentOnPage(ctx, uid, page)
	}}
}

func readRecord(table string, recUID int64) check {
	return check{fmt.Sprintf("MayReadRecord(%s:%d)", table, recUID), func(ctx context.Context, c *access.Checker, db *store.DB, uid int64) (bool, error) {
		rec, err := content.Builtin{}.Get(ctx, db, table, recUID)
		if err != nil {
			return false, err
		}
		return c.MayReadRecord(ctx, uid, rec)
	}}
}

// write asks AuthorizeWrite; a refusal must wrap access.ErrDenied.
func write(table string, recUID int64, fields ...string) check {
	return check{fmt.Sprintf("AuthorizeWrite(%s:%d %v)", table, recUID, fields), func(ctx context.Context, c *access.Checker, db *store.DB, uid int64) (bool, error) {
		rec, err := content.Builtin{}.Get(ctx, db, table, recUID)
		if err != nil {
			return false, err
		}
		err = c.AuthorizeWrite(ctx, db, uid, rec, fields)
		if err == nil {
			return true, nil
		}
		if errors.Is(err, access.ErrDenied) {
			return false, nil
		}
		return false, fmt.Errorf("refusal does not wrap ErrDenied: %w", err)
	}}
}

// answer is one expected answer of a check for a user.
type answer struct {
	user int64
	q    check
	want bool
}

// runAnswers seeds a fresh database of each dialect and checks every answer.
func runAnswers(t *testing.T, answers []answer) {
	t.Helper()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		seed(t, db)
		ctx := context.Background()
		c := access.NewChecker(db, nil, nil)
		for _, a := range answers {
			got, err := a.q.ask(ctx, c, db, a.user)
			if err != nil {
				t.Errorf("user %d: %s: %v", a.user, a.q.desc, err)
				continue
			}
			if got != a.want {
				t.Errorf("user %d: %s = %v, want %v", a.user, a.q.desc, got, a.want)
			}
		}
	})
}
