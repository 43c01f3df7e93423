package openpoint_test

// These tests decide with the write steps of package tool, which imports
// this package: they live in the external test package and reach the
// fixture of the internal tests through export_test.go.

import (
	"context"
	"slices"
	"testing"

	"waymark/internal/content"
	"waymark/internal/openpoint"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	"waymark/internal/tool"
)

type Target = openpoint.Target

var (
	opSetup  = openpoint.OpSetup
	opRecord = openpoint.OpRecord
	opRows   = openpoint.OpRows
	opExec   = openpoint.OpExec
	idents   = openpoint.Idents
)

const (
	opHome    = openpoint.OpHome
	opAbout   = openpoint.OpAbout
	opWelcome = openpoint.OpWelcome
	opSEO     = openpoint.OpSEO
	opAlt     = openpoint.OpAlt
	opErika   = openpoint.OpErika
)

func TestCloseAppliedClosesOnlyACompleteWriteWithoutHookFailure(t *testing.T) {
	complete := tool.WriteStep{Table: "pages", UID: opHome, Fields: []string{"description"}, Completeness: tool.Complete}
	hook := complete
	hook.HookFailedAfterWrite = true
	partial := complete
	partial.Completeness = tool.Partial
	unstated := complete
	unstated.Completeness = ""
	cases := []struct {
		name        string
		step        tool.WriteStep
		firstStepOK bool
		wantClosed  int
	}{
		{"complete", complete, true, 2},
		{"partial", partial, true, 0},
		{"hook failure after the write", hook, true, 0},
		{"first step failed", complete, false, 0},
		{"no stated completeness", unstated, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				o, _ := opSetup(t, db)
				opRecord(t, o, opSEO, opHome, "pages", opHome, "description", "keywords")
				opRecord(t, o, opAlt, opAbout, "pages", opHome, "description") // another skill and page: closed too
				before := opRows(t, db)
				target := Target{Table: "pages", UID: opHome, Fields: []string{"description"}}
				closed, err := o.CloseApplied(context.Background(), target, c.step, c.firstStepOK)
				if err != nil || closed != c.wantClosed {
					t.Fatalf("CloseApplied = %d, %v; want %d", closed, err, c.wantClosed)
				}
				want := before
				if c.wantClosed > 0 {
					want = []string{`1 1 pages:1 "keywords" 0 12:00`}
				}
				if got := opRows(t, db); !slices.Equal(got, want) {
					t.Errorf("open_points = %q, want %q", got, want)
				}
			})
		})
	}
}

func TestAPointSurvivesTheDeletionOfItsTarget(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		o, _ := opSetup(t, db)
		ctx := context.Background()
		opRecord(t, o, opSEO, opHome, "tt_content", opWelcome, "header")
		rec, err := content.Builtin{}.Get(ctx, db, "tt_content", opWelcome)
		if err != nil {
			t.Fatal(err)
		}
		rec.Deleted = true
		if err := content.PutTx(ctx, db, rec, 2); err != nil {
			t.Fatal(err)
		}
		if got := opRows(t, db); len(got) != 1 {
			t.Fatalf("open_points after deleting the target = %q, want the point", got)
		}
		if got, _ := o.Visible(ctx, opErika, 20); len(got) != 0 {
			t.Errorf("Visible with a deleted target = %q, want none listed", idents(got))
		}
		rec.Deleted = false
		if err := content.PutTx(ctx, db, rec, 3); err != nil {
			t.Fatal(err)
		}
		if got, _ := o.Visible(ctx, opErika, 20); !slices.Equal(idents(got), []string{"tt_content:100 header"}) {
			t.Errorf("Visible after restoring = %q, want the point again", idents(got))
		}
		opExec(t, db, "DELETE FROM records WHERE tbl = 'tt_content' AND uid = ?", opWelcome)
		step := tool.WriteStep{Table: "tt_content", UID: opWelcome, Fields: []string{"header"}, Completeness: tool.Complete}
		if closed, err := o.CloseApplied(ctx, Target{Table: "tt_content", UID: opWelcome, Fields: []string{"header"}}, step, true); err != nil || closed != 1 {
			t.Errorf("CloseApplied on a removed record = %d, %v; want 1 (only an applied write or keep closes)", closed, err)
		}
	})
}
