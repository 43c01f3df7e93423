package site_test

import (
	"errors"
	"fmt"
	"testing"

	"waymark/internal/access"
	"waymark/internal/fixture"
	"waymark/internal/site"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// A small tree: Home (1) › About (2), Services (3) › Consulting (4); max's
// mount is Services only; Home has a German translation (11). Consulting
// belongs to max's group: erika may show it (everybody: show) but not edit it.
const tree = `
languages:
  - {uid: 0, title: English, locale: en}
  - {uid: 1, title: Deutsch, locale: de}
groups:
  - {uid: 1, title: All, tablesSelect: [pages, tt_content], tablesModify: [pages], nonExcludeFields: ["pages:description", "pages:seoTitle"], languages: [0, 1], mounts: [1], subgroups: []}
  - {uid: 2, title: Services, tablesSelect: [pages, tt_content], tablesModify: [pages], nonExcludeFields: [], languages: [1], mounts: [3], subgroups: []}
users:
  - {uid: 2, username: erika, groups: [1], backendLanguage: de}
  - {uid: 3, username: max, groups: [2], backendLanguage: de}
pages:
  - {uid: 1, pid: 0, title: Home, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 1}, fields: {description: "", seoTitle: "Home of the agency in Hamburg"}}
  - {uid: 2, pid: 1, title: About, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 1}, fields: {description: "Short.", seoTitle: "About us: the people of the agency in Hamburg"}}
  - {uid: 3, pid: 1, title: Services, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 1}, fields: {seoTitle: "Services"}}
  - {uid: 4, pid: 3, title: Consulting, owner: 3, group: 2, perms: {user: 31, group: 27, everybody: 1}, fields: {}}
  - {uid: 11, pid: 0, title: Startseite, language: 1, l10nParent: 1, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 1}, fields: {description: ""}}
records:
  - {table: tt_content, uid: 100, pid: 1, language: 0, fields: {CType: text, header: Welcome, bodytext: Hello}}
  - {table: tt_content, uid: 101, pid: 1, language: 1, l10nParent: 100, fields: {CType: text, header: Willkommen, bodytext: Hallo}}
`

func setup(t *testing.T, db *store.DB) (*site.Site, *access.Actor, *access.Actor) {
	t.Helper()
	if _, err := fixture.Import(t.Context(), db, []byte(tree), "tree.yaml", &fixture.Options{}); err != nil {
		t.Fatal(err)
	}
	erika, err := access.LoadActor(t.Context(), nil, db, 2)
	if err != nil {
		t.Fatal(err)
	}
	max, err := access.LoadActor(t.Context(), nil, db, 3)
	if err != nil {
		t.Fatal(err)
	}
	return site.New(db, nil, access.NewChecker(db, nil, nil)), erika, max
}

func render(nodes []site.Node) string {
	out := ""
	for i, n := range nodes {
		if i > 0 {
			out += " "
		}
		out += n.Title
		if len(n.Children) > 0 {
			out += "(" + render(n.Children) + ")"
		}
	}
	return out
}

// The tree shows the pages a user may show; the descendants of a page outside
// their mounts move up to the top.
func TestTreeShowsOnlyShowablePages(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s, erika, max := setup(t, db)
		for _, c := range []struct {
			who  *access.Actor
			want string
		}{{erika, "Home(About Services(Consulting))"}, {max, "Services(Consulting)"}} {
			nodes, err := s.Tree(t.Context(), c.who)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(nodes); got != c.want {
				t.Errorf("Tree(%s) = %s, want %s", c.who.Username, got, c.want)
			}
		}
		langs, _ := s.Languages(t.Context(), max)
		if len(langs) != 1 || langs[0].Title != "Deutsch" {
			t.Errorf("Languages(max) = %v, want Deutsch only", langs)
		}
	})
}

// The preview reads the translation in its language; a page outside the
// mounts answers like an unknown one.
func TestPreviewInALanguageAndRefusedAlike(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s, erika, max := setup(t, db)
		p, err := s.Preview(t.Context(), erika, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		if p.Title != "Startseite" || p.Record != 11 || len(p.Elements) != 1 || p.Elements[0].Header != "Willkommen" {
			t.Errorf("Preview(1, de) = %+v", p)
		}
		for _, uid := range []int64{1, 999} {
			if _, err := s.Preview(t.Context(), max, uid, 1); !errors.Is(err, site.ErrNotFound) {
				t.Errorf("Preview(max, %d) = %v, want ErrNotFound", uid, err)
			}
		}
	})
}

// Suggestions rank by open points first, then by the visible SEO gaps;
// a page the editor may only read (Consulting) is never suggested.
func TestSuggestionsRankOpenPointsThenGapsOfEditablePagesOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s, erika, _ := setup(t, db)
		got, err := s.Suggestions(t.Context(), erika, map[site.PointCount]int{{Page: 2, Language: 0}: 2}, 0)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, g := range got {
			order = append(order, fmt.Sprintf("%s/%d:%v", g.Title, g.Language, g.Reasons))
		}
		// Scores: open points 3 each, a missing field 2, a short one 1; ties keep the tree's order.
		want := "[About/0:[{openPoints 2} {descriptionShort 6}] Startseite/1:[{descriptionMissing 0} {titleMissing 0}] " +
			"Home/0:[{descriptionMissing 0} {titleShort 29}] " +
			"Services/0:[{descriptionMissing 0} {titleShort 8}]]"
		if fmt.Sprint(order) != want {
			t.Errorf("Suggestions = %v\nwant %s", order, want)
		}
	})
}

// DescribeAll names every ref as Describe names it alone, and reads a record
// named by several refs once: a chat view names the tour's page in each
// outcome and on its card.
func TestDescribeAllNamesEachRefAsDescribeAndReadsARecordOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s, erika, max := setup(t, db)
		refs := []site.Ref{
			{Table: "pages", UID: 2, Fields: []string{"description"}},
			{Table: "pages", UID: 2, Fields: []string{"seoTitle", "description"}},
			{Table: "tt_content", UID: 100, Fields: []string{"header"}},
			{Table: "pages", UID: 999, Fields: []string{"title"}}, // gone: labels, no title
			{Table: "pages", UID: 2, Fields: nil},
		}
		for _, a := range []*access.Actor{erika, max} {
			all, errs, err := s.DescribeAll(t.Context(), a, refs, "de")
			if err != nil {
				t.Fatal(err)
			}
			for i, ref := range refs {
				one, oneErr := s.Describe(t.Context(), a, ref.Table, ref.UID, ref.Fields, "de")
				if fmt.Sprint(all[i]) != fmt.Sprint(one) || (errs[i] == nil) != (oneErr == nil) {
					t.Errorf("%s: DescribeAll[%d] = %+v, %v; Describe = %+v, %v", a.Username, i, all[i], errs[i], one, oneErr)
				}
			}
			if a == erika && (all[0].RecordTitle != "About" || all[3].RecordTitle != "") {
				t.Errorf("erika's titles = %q, %q; want About and none for the missing page", all[0].RecordTitle, all[3].RecordTitle)
			}
			if a == max && all[0].RecordTitle != "" {
				t.Errorf("max, outside About's mount, reads its title %q", all[0].RecordTitle)
			}
		}
		before := db.Statements()
		if _, _, err := s.DescribeAll(t.Context(), erika, refs[:2], "de"); err != nil {
			t.Fatal(err)
		}
		twice := db.Statements() - before
		before = db.Statements()
		if _, _, err := s.DescribeAll(t.Context(), erika, refs[:1], "de"); err != nil {
			t.Fatal(err)
		}
		if once := db.Statements() - before; twice != once {
			t.Errorf("two refs to one page ran %d statements, one ref %d: the page was read again", twice, once)
		}
	})
}
