package typo3

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"testing"

	"waymark/internal/content"
	"waymark/internal/demo"
	"waymark/internal/fixture"
)

func contentSetup(t *testing.T, db *sql.DB, d Dialect) *Content {
	t.Helper()
	demoDB(t, db, d)
	c, err := NewContent(db, d)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func nonEmpty(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v != "" && !(k == "colPos" && v == "0") && !(k == "ogImage" && v == "0") {
			out[k] = v
		}
	}
	return out
}

// Read back from TYPO3's tables, every demo page and content element is the
// record the built-in import makes of the fixture.
func TestContentReadsTheDemoAsTheBuiltInImportHoldsIt(t *testing.T) {
	t.Parallel()
	doc, err := fixture.Decode(demo.Fixture, "demo/site.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		c := contentSetup(t, db, d)
		ctx := context.Background()
		for _, p := range doc.Pages {
			got, err := c.Get(ctx, "pages", p.UID)
			if err != nil {
				t.Fatalf("Get(pages, %d) = %v", p.UID, err)
			}
			fields := maps.Clone(p.Fields)
			fields["title"] = p.Title
			want := content.Record{Table: "pages", UID: p.UID, PID: p.PID, Language: p.Language, L10nParent: p.L10nParent,
				Deleted: p.Deleted, Workspace: p.Workspace, Owner: p.Owner, Group: p.Group, Perms: p.Perms, Fields: nonEmpty(fields)}
			// The fixture has no slugs; TYPO3 pages do, and the demo gives them.
			if slug := got.Fields["slug"]; slug == "" || slug[0] != '/' {
				t.Errorf("page %d has slug %q", p.UID, slug)
			}
			delete(got.Fields, "slug")
			got.Fields = nonEmpty(got.Fields)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Get(pages, %d) =\n%+v\nwant\n%+v", p.UID, got, want)
			}
		}
		for _, r := range doc.Records {
			got, err := c.Get(ctx, r.Table, r.UID)
			if err != nil {
				t.Fatalf("Get(%s, %d) = %v", r.Table, r.UID, err)
			}
			want := content.Record{Table: r.Table, UID: r.UID, PID: r.PID, Language: r.Language, L10nParent: r.L10nParent,
				Deleted: r.Deleted, Workspace: r.Workspace, Fields: nonEmpty(r.Fields)}
			got.Fields = nonEmpty(got.Fields)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Get(%s, %d) =\n%+v\nwant\n%+v", r.Table, r.UID, got, want)
			}
		}
		if _, err := c.Get(ctx, "pages", 99); !errors.Is(err, content.ErrNotFound) {
			t.Errorf("Get(pages, 99) = %v, want ErrNotFound", err)
		}
		if _, err := c.Get(ctx, "be_users", 1); err == nil {
			t.Error("Get(be_users) succeeded")
		}
	})
}

func uidsOf(recs []content.Record) string {
	var u []int64
	for _, r := range recs {
		u = append(u, r.UID)
	}
	return fmt.Sprint(u)
}

func TestContentListsLiveRecordsOfAPageInALanguage(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		c := contentSetup(t, db, d)
		ctx := context.Background()
		run(t, db, d, "UPDATE `tt_content` SET `hidden` = 1 WHERE `uid` = 112")
		run(t, db, d, "UPDATE `tt_content` SET `sorting` = 1 WHERE `uid` = 112")
		run(t, db, d, "UPDATE `tt_content` SET `colPos` = 2 WHERE `uid` = 102")
		for _, c2 := range []struct {
			pid   int64
			langs []int64
			want  string
		}{
			{2, []int64{0, -1}, "[112 110]"}, // hidden stays, sorted first by sorting
			{2, []int64{1}, "[111]"},
			{1, []int64{0, -1}, "[100 102]"}, // colPos 0 before colPos 2
			{1, nil, "[100 101 102]"},
			{6, []int64{0}, "[140]"}, // the deleted element is left out
		} {
			got, err := c.OnPage(ctx, "tt_content", c2.pid, c2.langs...)
			if err != nil || uidsOf(got) != c2.want {
				t.Errorf("OnPage(tt_content, %d, %v) = %s, %v, want %s", c2.pid, c2.langs, uidsOf(got), err, c2.want)
			}
		}
		tr, err := c.Translation(ctx, "tt_content", 100, 1)
		if err != nil || tr.UID != 101 || tr.Fields["header"] != "Willkommen" {
			t.Errorf("Translation(tt_content 100, de) = %+v, %v", tr, err)
		}
		if _, err := c.Translation(ctx, "tt_content", 112, 1); !errors.Is(err, content.ErrNotFound) {
			t.Errorf("Translation(tt_content 112, de) = %v, want ErrNotFound", err)
		}
		if l, err := c.TranslationLanguages(ctx, "pages", 2); err != nil || fmt.Sprint(l) != "[1]" {
			t.Errorf("TranslationLanguages(pages 2) = %v, %v", l, err)
		}
		heads, err := c.Heads(ctx, "pages", []int64{9, 3, 99})
		if err != nil || len(heads) != 2 {
			t.Errorf("Heads(pages 9, 3, 99) = %d records, %v", len(heads), err)
		}
	})
}

func TestContentTreeFollowsPidAndLeavesOutDeletedPagesAndTranslations(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		c := contentSetup(t, db, d)
		run(t, db, d, "UPDATE `pages` SET `hidden` = 1 WHERE `uid` = 3")
		tree, err := c.Tree(context.Background(), 1)
		want := map[int64]int64{1: 0, 2: 1, 3: 1, 4: 3, 5: 3, 6: 1, 7: 1, 8: 1}
		if err != nil || !reflect.DeepEqual(tree, want) {
			t.Errorf("Tree(1) = %v, %v, want %v", tree, err, want)
		}
		if _, err := c.Tree(context.Background(), 9); !errors.Is(err, content.ErrNotFound) {
			t.Errorf("Tree(deleted page 9) = %v, want ErrNotFound", err)
		}
	})
}
