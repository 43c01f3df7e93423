package openpoint

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestRecordSkipStoresOneRowPerFieldWithTheRecordsLanguage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		o, clk := opSetup(t, db)
		opRecord(t, o, opSEO, opHome, "pages", opHome, "seoTitle", "description", "description")
		clk.Advance(time.Minute)
		opRecord(t, o, opSEO, opHome, "tt_content", opWillkommen)   // a move or delete: no field
		opRecord(t, o, opSEO, opHome, "tt_content", 4242, "header") // the record is missing: language 0
		want := []string{
			`1 1 pages:1 "description" 0 12:00`,
			`1 1 pages:1 "seoTitle" 0 12:00`,
			`1 1 tt_content:102 "" 1 12:01`,
			`1 1 tt_content:4242 "header" 0 12:01`,
		}
		if got := opRows(t, db); !slices.Equal(got, want) {
			t.Errorf("open_points = %q, want %q", got, want)
		}
	})
}

func TestRecordSkipAgainKeepsTheOriginalDate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		o, clk := opSetup(t, db)
		opRecord(t, o, opSEO, opHome, "pages", opHome, "description")
		clk.Advance(time.Hour)
		opRecord(t, o, opSEO, opHome, "pages", opHome, "description")
		err := db.InTx(context.Background(), func(tx *store.Tx) error {
			return o.RecordSkipTx(context.Background(), tx, opSEO, opHome, Target{Table: "pages", UID: opHome, Fields: []string{"description"}})
		})
		if err != nil {
			t.Fatalf("RecordSkipTx: %v", err)
		}
		opRecord(t, o, opAlt, opHome, "pages", opHome, "description") // another skill: its own point
		want := []string{`1 1 pages:1 "description" 0 12:00`, `2 1 pages:1 "description" 0 13:00`}
		if got := opRows(t, db); !slices.Equal(got, want) {
			t.Errorf("open_points = %q, want %q", got, want)
		}
	})
}

func TestRecordSkipRefusesAKeyWithoutSkillPageTableOrUID(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		o, _ := opSetup(t, db)
		home := Target{Table: "pages", UID: opHome, Fields: []string{"description"}}
		cases := map[string]struct {
			skill, page int64
			target      Target
		}{
			"no skill": {0, opHome, home},
			"no page":  {opSEO, 0, home},
			"no table": {opSEO, opHome, Target{UID: opHome, Fields: []string{"description"}}},
			"no uid":   {opSEO, opHome, Target{Table: "pages", Fields: []string{"description"}}},
		}
		for name, c := range cases {
			err := o.RecordSkip(context.Background(), c.skill, c.page, c.target)
			if !errors.Is(err, ErrInvalidKey) {
				t.Errorf("RecordSkip(%s) = %v, want ErrInvalidKey", name, err)
			}
		}
		if got := opRows(t, db); len(got) != 0 {
			t.Errorf("open_points after refused keys = %q, want none", got)
		}
	})
}

func TestCloseKeptClosesWhateverSkillRecordedIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		o, _ := opSetup(t, db)
		ctx := context.Background()
		opRecord(t, o, opSEO, opHome, "tt_content", opWelcome, "header", "bodytext")
		opRecord(t, o, opAlt, opHome, "tt_content", opWelcome, "bodytext")
		opRecord(t, o, opAlt, opHome, "tt_content", opWelcome) // the record as a whole
		closed, err := o.CloseKept(ctx, Target{Table: "tt_content", UID: opWelcome, Fields: []string{"bodytext"}})
		if err != nil || closed != 2 {
			t.Fatalf("CloseKept(bodytext) = %d, %v; want 2", closed, err)
		}
		want := []string{`2 1 tt_content:100 "" 0 12:00`, `1 1 tt_content:100 "header" 0 12:00`}
		if got := opRows(t, db); !slices.Equal(sorted(got), sorted(want)) {
			t.Errorf("open_points = %q, want %q", got, want)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error {
			closed, err = o.CloseKeptTx(ctx, tx, Target{Table: "tt_content", UID: opWelcome})
			return err
		})
		if err != nil || closed != 1 {
			t.Fatalf("CloseKeptTx(record) = %d, %v; want 1", closed, err)
		}
	})
}

func TestCloseKeptWithoutTargetClosesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		o, _ := opSetup(t, db)
		opRecord(t, o, opSEO, opHome, "pages", opHome, "description")
		for _, target := range []Target{{}, {Fields: []string{"description"}}} {
			if closed, err := o.CloseKept(context.Background(), target); err != nil || closed != 0 {
				t.Errorf("CloseKept(%+v) = %d, %v; want 0", target, closed, err)
			}
		}
		if got := opRows(t, db); len(got) != 1 {
			t.Errorf("open_points = %q, want the one point", got)
		}
	})
}

func TestForPromptOffersAtMostTwentyIdentitiesWithoutValues(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		o, clk := opSetup(t, db)
		ctx := context.Background()
		for uid := int64(1000); uid < 1025; uid++ {
			opExec(t, db, `INSERT INTO records (tbl, uid, pid, fields) VALUES ('tt_content', ?, ?, '{"bodytext":"Hello"}')`, uid, opHome)
			opRecord(t, o, opSEO, opHome, "tt_content", uid, "bodytext")
			clk.Advance(time.Second)
		}
		opRecord(t, o, opSEO, opHome, "pages", opHome, "description")
		opRecord(t, o, opAlt, opHome, "pages", opHome, "seoTitle") // another skill: not offered
		points, err := o.ForPrompt(ctx, opAdmin, opSEO, opHome)
		if err != nil || len(points) != PromptLimit {
			t.Fatalf("ForPrompt = %d points, %v; want %d", len(points), err, PromptLimit)
		}
		if p := points[0]; p.Table != "pages" || p.UID != opHome || p.Field != "description" || p.Skill != opSEO {
			t.Errorf("ForPrompt[0] = %+v, want the newest point pages:1 description", p)
		}
		text, err := o.PromptFor(ctx, opAdmin, opSEO, opHome)
		if err != nil || !strings.Contains(text, "- pages:1 description\n") || !strings.Contains(text, "- tt_content:1024 bodytext\n") {
			t.Errorf("PromptFor = %q, %v; want lines of identities", text, err)
		}
		for _, value := range []string{"Home | Site", "Hello", "seoTitle", "tt_content:1004"} {
			if strings.Contains(text, value) {
				t.Errorf("PromptFor holds %q: %q", value, text)
			}
		}
		if got := strings.Count(text, "\n- "); got != PromptLimit {
			t.Errorf("PromptFor lists %d points, want %d", got, PromptLimit)
		}
		if text, _ := o.PromptFor(ctx, opAdmin, 0, opHome); text != "" {
			t.Errorf("PromptFor without skill = %q, want empty", text)
		}
		if got := PromptText([]Point{{Table: "tt_content", UID: 5}}); !strings.Contains(got, "- tt_content:5 (the record as a whole)") {
			t.Errorf("PromptText(record) = %q", got)
		}
	})
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
