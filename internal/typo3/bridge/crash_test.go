package bridge_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/typo3"
	"waymark/internal/typo3/bridge"
	"waymark/internal/typo3/live"
	"waymark/internal/typo3/typo3test"
)

// A worker killed (SIGKILL) after DataHandler committed the change in TYPO3
// and before Waymark's transaction committed: the retry of the same
// approved call (the same key) finds it applied — the extension answers
// already_applied — and TYPO3 holds the change once, with one history row.
func TestAWorkerKilledBetweenTYPO3sCommitAndWaymarksAppliesTheChangeOnce(t *testing.T) {
	typo3test.EachReal(t, func(t *testing.T, r *typo3test.Real) {
		ctx := context.Background()
		b := besideReal(t, r)
		path := filepath.Join(t.TempDir(), "waymark.db")
		db, err := store.Open(ctx, "sqlite:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		shown := b.liveDescription(t)
		value := fmt.Sprintf("Written before the kill, %d.", time.Now().UnixNano())
		cmd := exec.Command(os.Args[0], "-test.run=^TestBridgeWriteChildProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "WAYMARK_BRIDGE_CHILD=1", "WAYMARK_BRIDGE_STORE=sqlite:"+path, "WAYMARK_BRIDGE_T3="+r.URL,
			"WAYMARK_BRIDGE_SITES="+r.Sites, "WAYMARK_BRIDGE_BASE="+r.Base, "WAYMARK_BRIDGE_SECRET_TEST="+r.Secret,
			"WAYMARK_BRIDGE_USER="+strconv.FormatInt(b.editor, 10), "WAYMARK_BRIDGE_SHOWN="+shown, "WAYMARK_BRIDGE_VALUE="+value)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.AfterFunc(90*time.Second, func() { _ = cmd.Process.Kill() })
		reached := false
		for lines := bufio.NewScanner(out); lines.Scan(); {
			if lines.Text() == "after-typo3-commit" {
				reached = true
				break
			}
		}
		deadline.Stop()
		_ = cmd.Process.Kill() // SIGKILL, before Waymark's commit
		_ = cmd.Wait()
		if !reached {
			t.Fatal("the child never reached TYPO3's commit")
		}
		history := func() string {
			return r.PHP(t, fmt.Sprintf(`$c = \TYPO3\CMS\Core\Utility\GeneralUtility::makeInstance(\TYPO3\CMS\Core\Database\ConnectionPool::class)->getConnectionForTable('sys_history');
				$n = 0; foreach ($c->select(['history_data'], 'sys_history', ['tablename' => 'pages', 'recuid' => 2])->fetchFirstColumn() as $d) {
				  if (str_contains((string)$d, %q)) { $n++; } } echo $n;`, value))
		}
		if got := b.liveDescription(t); got != value {
			t.Fatalf("TYPO3 after the kill holds %q, want the child's committed %q", got, value)
		}
		if n := history(); n != "1" {
			t.Fatalf("history rows of the change after the kill = %s, want 1", n)
		}
		// The retry, as the requeued run makes it: the same request, the same key.
		inst, err := live.New(ctx, r.DB, r.Dialect, r.Sites, nil)
		if err != nil {
			t.Fatal(err)
		}
		rw := childWriter(t, db, inst, r.Base, r.Secret)
		// TYPO3 holds the value now where the card showed another: the retry
		// sends the call's key, finds it applied, and records the change for
		// the export once, however often it is retried.
		for i := range 2 {
			if written, err := rw.Write(ctx, crashRequest(b.editor, shown, value)); err != nil || len(written.Changes) != 1 || written.Changes[0].Old != shown {
				t.Fatalf("retry %d after the kill = %+v, %v; want the change as written", i+1, written, err)
			}
		}
		var recorded int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM cms_changes WHERE run_uuid = 'run-crash' AND field = 'description' AND new_value = ?", value).Scan(&recorded); err != nil || recorded != 1 {
			t.Errorf("the export's records of the change = %d (%v), want 1", recorded, err)
		}
		// Sent with its key all the same (a retry whose check read TYPO3 before the kill would):
		client, _ := bridge.NewClient(r.Base, r.Secret, nil)
		applied, err := client.Apply(ctx, bridge.ApplyRequest{User: b.editor, Table: "pages", UID: 2, Key: crashKey(value) + "#pages:2",
			Fields: map[string]bridge.FieldChange{"description": {Old: shown, New: value}}})
		if err != nil || applied.Status != "already_applied" {
			t.Fatalf("the approved call's key sent again = %+v, %v; want already_applied", applied, err)
		}
		if n := history(); n != "1" {
			t.Errorf("history rows of the change after the retry = %s, want 1", n)
		}
	})
}

// crashKey is the approved call's key: one per change, as each run's call
// has its own (the extension keeps every key it applied).
func crashKey(value string) string { return "run-crash/" + value }

func crashRequest(user int64, shown, value string) content.WriteRequest {
	return content.WriteRequest{Table: "pages", UID: 2, Fields: map[string]string{"description": value}, User: user,
		Run: "run-crash", Key: crashKey(value), Shown: map[string]string{"description": shown}}
}

func childWriter(t testing.TB, db *store.DB, inst *live.TYPO3, base, secret string) *bridge.RecordWriter {
	client, err := bridge.NewClient(base, secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := bridge.NewRecordWriter(client, db, inst, inst)
	if err != nil {
		t.Fatal(err)
	}
	return rw
}

// TestBridgeWriteChildProcess is the worker of
// TestAWorkerKilledBetweenTYPO3sCommitAndWaymarksAppliesTheChangeOnce: it
// writes through the extension inside a Waymark transaction, says so once
// TYPO3 has committed, and waits to be killed before its own commit.
// Without WAYMARK_BRIDGE_CHILD it does nothing.
func TestBridgeWriteChildProcess(t *testing.T) {
	if os.Getenv("WAYMARK_BRIDGE_CHILD") == "" {
		t.Skip("the child process of TestAWorkerKilledBetweenTYPO3sCommitAndWaymarksAppliesTheChangeOnce")
	}
	ctx := context.Background()
	db, err := store.Open(ctx, os.Getenv("WAYMARK_BRIDGE_STORE"))
	if err != nil {
		t.Fatal(err)
	}
	t3db, d, err := typo3.Open(ctx, os.Getenv("WAYMARK_BRIDGE_T3"))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := live.New(ctx, t3db, d, os.Getenv("WAYMARK_BRIDGE_SITES"), nil)
	if err != nil {
		t.Fatal(err)
	}
	user, _ := strconv.ParseInt(os.Getenv("WAYMARK_BRIDGE_USER"), 10, 64)
	rw := childWriter(t, db, inst, os.Getenv("WAYMARK_BRIDGE_BASE"), os.Getenv("WAYMARK_BRIDGE_SECRET_TEST"))
	_ = db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := rw.WriteTx(ctx, tx, crashRequest(user, os.Getenv("WAYMARK_BRIDGE_SHOWN"), os.Getenv("WAYMARK_BRIDGE_VALUE"))); err != nil {
			t.Fatal(err)
		}
		fmt.Println("after-typo3-commit")
		time.Sleep(time.Minute) // killed here, before Waymark's commit
		return errors.New("not killed")
	})
}
