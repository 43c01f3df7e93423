package openpoint

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// opSpread records one point on each kind of target of the fixture, one minute apart, newest last.
func opSpread(t *testing.T, o *Store, clk interface{ Advance(time.Duration) }) {
	t.Helper()
	for _, p := range []struct {
		page  int64
		table string
		uid   int64
		field string
	}{
		{opHome, "pages", opHome, "description"},         // excluded, granted to erika, hans, otto
		{opHome, "pages", opHome, "title"},               // not excluded
		{opHome, "tt_content", opWelcome, "bodytext"},    // tt_content, language 0
		{opHome, "tt_content", opWillkommen, "header"},   // language 1
		{opSecret, "tt_content", opClassified, "header"}, // page nobody but admins may show
		{opOutside, "tt_content", opFar, "header"},       // page outside every mount
		{opHome, "tt_content", 4242, "header"},           // the record is gone
		{opAbout, "pages", opAbout, ""},                  // the record as a whole
	} {
		var fields []string
		if p.field != "" {
			fields = []string{p.field}
		}
		opRecord(t, o, opSEO, p.page, p.table, p.uid, fields...)
		clk.Advance(time.Minute)
	}
}

func TestVisibleAppliesTheRuleForEveryReader(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		o, clk := opSetup(t, db)
		opSpread(t, o, clk)
		cases := map[int64][]string{
			opAdmin: {"pages:6 ", "tt_content:104 header", "tt_content:103 header", "tt_content:102 header",
				"tt_content:100 bodytext", "pages:1 title", "pages:1 description"},
			opErika: {"pages:6 ", "tt_content:102 header", "tt_content:100 bodytext", "pages:1 title", "pages:1 description"},
			opAnna:  {"pages:6 ", "tt_content:102 header", "tt_content:100 bodytext", "pages:1 title"}, // no excluded field
			opRudi:  {"pages:6 ", "pages:1 title"},                                                     // no tt_content, no grant
			opOtto:  {"pages:6 ", "tt_content:100 bodytext", "pages:1 title", "pages:1 description"},   // language 0 only
			opOff:   {},
			4711:    {}, // no such user
		}
		for reader, want := range cases {
			got, err := o.Visible(context.Background(), reader, 20)
			if err != nil || !slices.Equal(idents(got), want) {
				t.Errorf("Visible(%d) = %q, %v; want %q", reader, idents(got), err, want)
			}
		}
	})
}

func TestVisibleCountsTheLimitAfterTheRule(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		o, clk := opSetup(t, db)
		for uid := int64(2001); uid <= 2005; uid++ { // the oldest five: visible to anna
			opExec(t, db, "INSERT INTO records (tbl, uid, pid, fields) VALUES ('tt_content', ?, ?, '{}')", uid, opHome)
			opRecord(t, o, opSEO, opHome, "tt_content", uid, "bodytext")
			clk.Advance(time.Second)
		}
		for i := int64(0); i < 25; i++ { // the newest 25: an excluded field anna may not edit, or a hidden page
			if i%2 == 0 {
				opRecord(t, o, 100+i, opHome, "pages", opHome, "description")
			} else {
				opRecord(t, o, 100+i, opSecret, "tt_content", opClassified, "header")
			}
			clk.Advance(time.Second)
		}
		got, err := o.Visible(context.Background(), opAnna, 3)
		want := []string{"tt_content:2005 bodytext", "tt_content:2004 bodytext", "tt_content:2003 bodytext"}
		if err != nil || !slices.Equal(idents(got), want) {
			t.Errorf("Visible(anna, 3) = %q, %v; want %q", idents(got), err, want)
		}
		if all, _ := o.Visible(context.Background(), opAdmin, 100); len(all) != 30 {
			t.Errorf("Visible(admin, 100) = %d points, want all 30", len(all))
		}
	})
}

func TestVisibleScansPastOneBatch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		o, _ := opSetup(t, db)
		opExec(t, db, "INSERT INTO open_points (skill_uid, page_uid, tbl, uid, field, language, created_at) VALUES (1, 1, 'tt_content', 100, 'bodytext', 0, 1)")
		q := "INSERT INTO open_points (skill_uid, page_uid, tbl, uid, field, language, created_at) VALUES (?, 2, 'tt_content', 103, 'header', 0, 5)"
		for i := 0; i < scanBatch+20; i++ { // hidden points, all of one date: the keyset must break ties by id
			opExec(t, db, q, 10+i)
		}
		got, err := o.Visible(context.Background(), opErika, 20)
		if err != nil || !slices.Equal(idents(got), []string{"tt_content:100 bodytext"}) {
			t.Errorf("Visible(erika) = %q, %v; want the one point behind %d hidden ones", idents(got), err, scanBatch+20)
		}
	})
}

func TestVisibleDescribesEachPointInTheReadersLanguage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		o, clk := opSetup(t, db)
		opRecord(t, o, opSEO, opHome, "pages", opHome, "description") // empty: missing
		clk.Advance(time.Minute)
		opRecord(t, o, opAlt, opHome, "pages", opHome, "seoTitle") // set: open
		clk.Advance(time.Minute)
		opRecord(t, o, opSEO, opHome, "tt_content", opWillkommen, "bodytext") // language 1, empty
		clk.Advance(time.Minute)
		opRecord(t, o, opSEO, opHome, "tt_content", opWillkommen) // the record as a whole
		clk.Advance(time.Minute)
		opRecord(t, o, opSEO, opAbout, "pages", opAbout, "description") // set: open
		opExec(t, db, "DELETE FROM skills WHERE uid = ?", opAlt)
		want := map[int64][]string{
			opErika: {"Description open on “About”", "Content element open on “Startseite”", "Text is missing on “Startseite”",
				"SEO title open on “Home”", "Description is missing on “Home”"},
			opHans: {"Beschreibung offen auf „About“", "Inhaltselement offen auf „Startseite“", "Text fehlt auf „Startseite“",
				"SEO-Titel offen auf „Home“", "Beschreibung fehlt auf „Home“"},
		}
		for reader, sentences := range want {
			got, err := o.Visible(context.Background(), reader, 20)
			if err != nil {
				t.Fatalf("Visible(%d): %v", reader, err)
			}
			var summaries []string
			for _, p := range got {
				summaries = append(summaries, p.Summary)
			}
			if !slices.Equal(summaries, sentences) {
				t.Errorf("Visible(%d) summaries = %q, want %q", reader, summaries, sentences)
			}
		}
		got, _ := o.Visible(context.Background(), opErika, 20)
		raw, err := json.Marshal(got[2])
		if err != nil {
			t.Fatal(err)
		}
		wantJSON := `{"page":1,"language":1,"skill":1,"skillIdentifier":"seo-optimieren","table":"tt_content","uid":102,` +
			`"field":"bodytext","createdAt":"2026-10-09T12:02:00Z","summary":"Text is missing on “Startseite”"}`
		if string(raw) != wantJSON {
			t.Errorf("JSON = %s\nwant   %s", raw, wantJSON)
		}
		if got[3].SkillIdentifier != "" || got[3].Skill != opAlt {
			t.Errorf("point of a deleted skill = %+v, want skill %d with an empty identifier", got[3], opAlt)
		}
	})
}

func TestSentenceFallsBackToEnglish(t *testing.T) {
	if got := Sentence("fr", "Description", "Accueil", true); got != "Description is missing on “Accueil”" {
		t.Errorf("Sentence(fr) = %q", got)
	}
}

func TestForPageAnswersMissingAndForbiddenAlike(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		o, clk := opSetup(t, db)
		opSpread(t, o, clk)
		opRecord(t, o, opAlt, opHome, "pages", opHome, "seoTitle")
		ctx := context.Background()
		for name, c := range map[string]struct{ reader, page int64 }{
			"missing page":         {opErika, opMissing},
			"page of no one":       {opErika, opSecret},
			"outside the mounts":   {opErika, opOutside},
			"page 0":               {opErika, 0},
			"disabled reader":      {opOff, opHome},
			"missing reader":       {4711, opHome},
			"missing page (admin)": {opAdmin, opMissing},
		} {
			if got, err := o.ForPage(ctx, c.reader, c.page, 0); !errors.Is(err, ErrNotFound) || got != nil {
				t.Errorf("ForPage(%s) = %v, %v; want ErrNotFound", name, got, err)
			}
		}
		got, err := o.ForPage(ctx, opErika, opHome, 0)
		want := []string{"pages:1 seoTitle", "tt_content:102 header", "tt_content:100 bodytext", "pages:1 title", "pages:1 description"}
		if err != nil || !slices.Equal(idents(got), want) {
			t.Errorf("ForPage(erika, Home) = %q, %v; want %q", idents(got), err, want)
		}
		got, err = o.ForPage(ctx, opRudi, opHome, opSEO)
		if err != nil || !slices.Equal(idents(got), []string{"pages:1 title"}) {
			t.Errorf("ForPage(rudi, Home, seo) = %q, %v; want only pages:1 title", idents(got), err)
		}
		got, err = o.ForPage(ctx, opAdmin, opSecret, 0)
		if err != nil || !slices.Equal(idents(got), []string{"tt_content:103 header"}) {
			t.Errorf("ForPage(admin, Secret) = %q, %v", idents(got), err)
		}
	})
}
