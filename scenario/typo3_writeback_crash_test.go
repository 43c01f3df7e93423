package scenario_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/demo"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	"waymark/internal/typo3"
	"waymark/internal/typo3/live"
	"waymark/internal/typo3/typo3test"
	wt "waymark/internal/waymarktest"
)

// A TYPO3 write and Waymark's record of it commit in two databases, TYPO3
// first. A crash between the two commits leaves the change in TYPO3 and not
// in Waymark; the retry of the same approved call (same run, same call id,
// so the same key) finds the key in sys_history and completes Waymark's
// record without writing TYPO3 again: applied at most once.

const retriedText = "About Nordlicht Digital: a web agency in Hamburg-Altona since 2009, a team of 24 people."

// writeBackRequest is the approved call as the tool sends it: the key from
// the run and the call, the value the card showed.
func writeBackRequest(shown string) content.WriteRequest {
	return content.WriteRequest{Table: "pages", UID: 2, Fields: map[string]string{"description": retriedText}, User: erikaUID,
		Run: "run-crash", Key: "run-crash/call-7", Shown: map[string]string{"description": shown}}
}

// recordWriter is the writer into TYPO3 as the application wires it,
// checking against the records of src and the users of dir.
func recordWriter(t testing.TB, db *store.DB, src content.Source, dir access.Directory, t3w *typo3.Writer) *typo3.RecordWriter {
	return &typo3.RecordWriter{TYPO3: t3w, Local: content.NewWriter(db, src, access.NewChecker(db, src, dir), nil), DB: db}
}

func shownDescription(t testing.TB, src content.Source, db *store.DB) string {
	t.Helper()
	rec, err := src.Get(context.Background(), db, "pages", 2)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Fields["description"]
}

// expectAppliedOnce checks TYPO3 and Waymark after the retry.
func expectAppliedOnce(t *testing.T, e *wt.Env, t3 typo3test.DB) {
	t.Helper()
	db, d := t3.DB, t3.Dialect
	if got := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2"); got != retriedText {
		t.Errorf("TYPO3 pages:2 description = %q, want %q", got, retriedText)
	}
	if n := t3Count(t, db, d, "SELECT COUNT(*) FROM sys_history WHERE tablename = 'pages' AND recuid = 2"); n != 1 {
		t.Errorf("sys_history rows = %d, want 1: the change was applied %d times", n, n)
	}
	if n := t3Count(t, db, d, "SELECT COUNT(*) FROM sys_log WHERE tablename = 'pages' AND recuid = 2"); n != 1 {
		t.Errorf("sys_log rows = %d, want 1", n)
	}
	noWaymarkCopy(t, e.DB)
	// The export's account of the change: recorded once, by the retry that
	// committed, with the value the card showed as the one before.
	var n int
	if err := e.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM cms_changes WHERE tbl = 'pages' AND uid = 2 AND field = 'description' AND new_value = ? AND run_uuid = 'run-crash' AND old_value <> new_value",
		retriedText).Scan(&n); err != nil || n != 1 {
		t.Errorf("the export's records of the change = %d (%v), want 1", n, err)
	}
}

func TestTYPO3WriteRetriedAfterItsTYPO3CommitIsAppliedOnce(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		ctx := context.Background()
		e := besideTYPO3(t, nil, t3, string(demo.Fixture), &wt.Options{APIOnly: true})
		rw := recordWriter(t, e.DB, e.App.Source, e.App.Directory, typo3Writer(t, t3.DB, t3.Dialect))
		req := writeBackRequest(shownDescription(t, e.App.Source, e.DB))
		crash := errors.New("the worker died after the TYPO3 commit")
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			if _, err := rw.WriteTx(ctx, tx, req); err != nil {
				return err
			}
			return crash // Waymark's transaction never commits
		})
		if !errors.Is(err, crash) {
			t.Fatalf("first attempt = %v", err)
		}
		if got := t3Value(t, t3.DB, t3.Dialect, "SELECT description FROM pages WHERE uid = 2"); got != retriedText {
			t.Fatalf("TYPO3 was not written by the first attempt: %q", got)
		}
		for i := range 2 { // the retry, and one more
			if _, err := rw.Write(ctx, req); err != nil {
				t.Fatalf("retry %d = %v", i+1, err)
			}
		}
		expectAppliedOnce(t, e, t3)
	})
}

// TestTYPO3WriteSurvivesKill9InsideTheWrite runs the write in a child
// process that is killed with SIGKILL inside the write: before the TYPO3
// commit (the TYPO3 server rolls the open transaction of the dead connection
// back: nothing half-written, the row lock released) and after the TYPO3
// commit, before Waymark's (the moment no fence sees). The retry in this
// process writes TYPO3 exactly once.
func TestTYPO3WriteSurvivesKill9InsideTheWrite(t *testing.T) {
	for _, at := range []string{"before-typo3-commit", "after-typo3-commit"} {
		t.Run(at, func(t *testing.T) {
			typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) { kill9InsideTheWrite(t, t3, at) })
		})
	}
}

func kill9InsideTheWrite(t *testing.T, t3 typo3test.DB, at string) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "waymark.db")
	db, err := store.Open(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e := besideTYPO3(t, db, t3, string(demo.Fixture), &wt.Options{APIOnly: true})
	shown := shownDescription(t, e.App.Source, db)
	before := t3Value(t, t3.DB, t3.Dialect, "SELECT description FROM pages WHERE uid = 2")

	cmd := exec.Command(os.Args[0], "-test.run=^TestTYPO3WriteChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WAYMARK_T3_CHILD="+at, "WAYMARK_T3_STORE=sqlite:"+path, "WAYMARK_T3_URL="+t3.URL,
		"WAYMARK_T3_SHOWN="+shown)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	reached := false
	deadline := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	for lines.Scan() {
		if lines.Text() == at {
			reached = true
			break
		}
	}
	deadline.Stop()
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !reached {
		t.Fatalf("the child never reached %s", at)
	}
	want, wantDesc := 1, retriedText // the child's TYPO3 commit stands
	if at == "before-typo3-commit" {
		want, wantDesc = 0, before // rolled back by the TYPO3 server
	}
	if n := t3Count(t, t3.DB, t3.Dialect, "SELECT COUNT(*) FROM sys_history"); n != want {
		t.Fatalf("sys_history rows after the kill = %d, want %d", n, want)
	}
	if got := t3Value(t, t3.DB, t3.Dialect, "SELECT description FROM pages WHERE uid = 2"); got != wantDesc {
		t.Fatalf("TYPO3 description after the kill = %q, want %q", got, wantDesc)
	}
	rw := recordWriter(t, db, e.App.Source, e.App.Directory, typo3Writer(t, t3.DB, t3.Dialect))
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a row lock left behind would hold the retry
	defer cancel()
	if _, err := rw.Write(rctx, writeBackRequest(shown)); err != nil {
		t.Fatalf("retry after the kill = %v", err)
	}
	expectAppliedOnce(t, e, t3)
}

// TestTYPO3WriteChildProcess is the worker of TestTYPO3WriteSurvivesKill9InsideTheWrite:
// it writes into TYPO3 inside a Waymark transaction, says so and waits to be killed
// before that transaction commits. Without WAYMARK_T3_CHILD it does nothing.
func TestTYPO3WriteChildProcess(t *testing.T) {
	if os.Getenv("WAYMARK_T3_CHILD") == "" {
		t.Skip("the child process of TestTYPO3WriteSurvivesKill9InsideTheWrite")
	}
	ctx := context.Background()
	db, err := store.Open(ctx, os.Getenv("WAYMARK_T3_STORE"))
	if err != nil {
		t.Fatal(err)
	}
	t3db, d, err := typo3.Open(ctx, os.Getenv("WAYMARK_T3_URL"))
	if err != nil {
		t.Fatal(err)
	}
	// Beside TYPO3, as the worker runs: the records read from TYPO3.
	sites := t.TempDir()
	if err := typo3.WriteDemoSites(sites); err != nil {
		t.Fatal(err)
	}
	inst, err := live.New(ctx, t3db, d, sites, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := os.Getenv("WAYMARK_T3_CHILD")
	t3w := typo3Writer(t, t3db, d)
	if at == "before-typo3-commit" {
		t3w.Test.BeforeCommit = func() {
			fmt.Println(at)
			time.Sleep(time.Minute) // killed here, inside the TYPO3 transaction
		}
	}
	rw := recordWriter(t, db, inst, inst, t3w)
	_ = db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := rw.WriteTx(ctx, tx, writeBackRequest(os.Getenv("WAYMARK_T3_SHOWN"))); err != nil {
			t.Fatal(err)
		}
		fmt.Println(at)
		time.Sleep(time.Minute) // killed here, before Waymark's commit
		return errors.New("not killed")
	})
}

// The TYPO3 writer itself refuses a field whose TYPO3 value is not the one
// the card showed (the approval's check passed before TYPO3 changed): a
// *content.ConflictError naming TYPO3 with the current value, nothing
// written. On the built-in source it writes nothing at all.
func TestTYPO3WriterRefusesAFieldChangedSinceTheCardAndRecordsReadElsewhere(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		ctx := context.Background()
		e := besideTYPO3(t, nil, t3, string(demo.Fixture), &wt.Options{APIOnly: true})
		rw := recordWriter(t, e.DB, e.App.Source, e.App.Directory, typo3Writer(t, t3.DB, t3.Dialect))
		current := shownDescription(t, e.App.Source, e.DB)
		_, err := rw.Write(ctx, writeBackRequest("what the card showed before TYPO3 changed it"))
		var conflict *content.ConflictError
		if !errors.As(err, &conflict) || conflict.Source != "TYPO3" || conflict.Field != "description" || conflict.Current != current {
			t.Fatalf("Write = %v, want a TYPO3 conflict on description holding %q", err, current)
		}
		if n := t3Count(t, t3.DB, t3.Dialect, "SELECT COUNT(*) FROM sys_history") + t3Count(t, t3.DB, t3.Dialect, "SELECT COUNT(*) FROM sys_log"); n != 0 {
			t.Errorf("history and log rows = %d, want none", n)
		}
		noWaymarkCopy(t, e.DB)

		builtin := wt.New(t, storetest.SQLite(t), string(demo.Fixture), &wt.Options{APIOnly: true})
		if _, err := recordWriter(t, builtin.DB, builtin.App.Source, builtin.App.Directory, typo3Writer(t, t3.DB, t3.Dialect)).Write(ctx, writeBackRequest(current)); !errors.Is(err, typo3.ErrNotBesideTYPO3) {
			t.Errorf("Write on the built-in source = %v, want ErrNotBesideTYPO3", err)
		}
		if got := t3Value(t, t3.DB, t3.Dialect, "SELECT description FROM pages WHERE uid = 2"); got != current {
			t.Errorf("TYPO3 pages:2 description = %q, want it unchanged", got)
		}
	})
}
