package chat

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"waymark/internal/store"
)

var update = flag.Bool("update", false, "rewrite doc.go's transition table from transitions")

// The package comment shows the transition table as declared: generated
// from transitions, so that the documentation cannot drift from the code.
func TestDocShowsTheTransitionTable(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	intro, end := []byte("-update rewrites it):\n//\n"), []byte("package chat\n")
	i, j := bytes.Index(src, intro), bytes.Index(src, end)
	if i < 0 || j < i {
		t.Fatalf("doc.go has no transition table section (%q … %q)", intro, end)
	}
	i += len(intro)
	got, want := string(src[i:j]), transitionTable()
	if got == want {
		return
	}
	if *update {
		out := append(append(append([]byte{}, src[:i]...), want...), src[j:]...)
		if err := os.WriteFile("doc.go", out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("doc.go's transition table differs from transitions; run go test ./internal/chat -run TestDocShowsTheTransitionTable -update\ngot:\n%s\nwant:\n%s", got, want)
}

// storedConversation inserts a conversation in status st (with a card
// column, so that a transition's clearing of it shows) and returns its id.
func storedConversation(t *testing.T, db *store.DB, st Status, card string) int64 {
	t.Helper()
	var id int64
	if err := db.QueryRow(context.Background(), `INSERT INTO conversations (owner_uid, configuration_uid, page_uid, language, status,
		pending_run_uuid, card, created_at, updated_at) VALUES (2, 1, 1, 0, ?, 'run-1', ?, 1, 1) RETURNING id`, string(st), card).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// rawConversation is the stored row of conversation id, every column as
// text: what a refused or lost transition must leave unchanged.
func rawConversation(t *testing.T, db *store.DB, id int64) string {
	t.Helper()
	var r row
	var status, card, progress, highlight string
	var created, updated int64
	if err := db.QueryRow(context.Background(), "SELECT "+convColumns+" FROM conversations WHERE id = ?", id).Scan(&r.ID, &r.Owner,
		&r.Configuration, &r.Page, &r.Language, &r.Skill, &r.Process, &status, &r.LastRun, &r.PendingRun, &card, &progress, &highlight,
		&r.Error, &r.Follows, &created, &updated); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%+v status=%s card=%q progress=%q highlight=%q created=%d updated=%d", r, status, card, progress, highlight, created, updated)
}

// A change the table does not allow is refused before any statement: from a
// status the event does not leave from, to one it does not go to, an event
// not in the table. The error names the event and both states; nothing
// changes.
func TestATransitionNotInTheTableIsRefusedNamingTheEventAndBothStates(t *testing.T) {
	eachDB(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		id := storedConversation(t, db, AwaitingApproval, `{"turnDigest":"d"}`)
		before := rawConversation(t, db, id)
		for _, tc := range []struct {
			ev   event
			from Status
			c    change
			want string
		}{
			{evStop, AwaitingApproval, change{}, "stop does not lead from awaiting_approval to idle"},
			{evGiveBack, Processing, change{status: AwaitingApproval}, "give back does not lead from processing to awaiting_approval"},
			{evSend, AwaitingApproval, change{}, "send does not lead from awaiting_approval to processing"},
			{evStart, Idle, change{}, "start does not lead from idle to idle"},
			{"jump", AwaitingApproval, change{status: Idle}, `unknown event "jump"`},
		} {
			won, err := applyTx(ctx, db, id, tc.ev, tc.from, tc.c, 99)
			if won || !errors.Is(err, errTransition) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s from %s: won %v, err %v; want refused: %s", tc.ev, tc.from, won, err, tc.want)
			}
		}
		if after := rawConversation(t, db, id); after != before {
			t.Errorf("a refused transition changed the conversation:\n%s\nwas\n%s", after, before)
		}
	})
}

// An event may change only the columns its row declares: a withdrawal that
// would also set the skill, a claim of an answer that would clear the card,
// a follow that would set the error are refused, naming the column; nothing
// changes.
func TestAnEventChangingAColumnItDoesNotDeclareIsRefused(t *testing.T) {
	eachDB(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		waitingID := storedConversation(t, db, AwaitingApproval, `{"turnDigest":"d"}`)
		busyID := storedConversation(t, db, Processing, "")
		skill, errText := int64(7), "x"
		for _, tc := range []struct {
			id   int64
			ev   event
			from Status
			c    change
			want string
		}{
			{waitingID, evWithdraw, AwaitingApproval, change{skill: &skill}, "withdraw may not change skill_uid"},
			{waitingID, evClaimAnswer, AwaitingApproval, change{}, "claim answer may not change card"},
			{busyID, evFollow, Processing, change{follows: true, err: &errText}, "follow may not change error"},
			{busyID, evFail, Processing, change{follows: true, err: &errText}, "fail may not change follows_run"},
		} {
			before := rawConversation(t, db, tc.id)
			won, err := applyTx(ctx, db, tc.id, tc.ev, tc.from, tc.c, 99)
			if won || !errors.Is(err, errTransition) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: won %v, err %v; want refused: %s", tc.ev, won, err, tc.want)
			}
			if after := rawConversation(t, db, tc.id); after != before {
				t.Errorf("%s: a refused transition changed the conversation:\n%s\nwas\n%s", tc.ev, after, before)
			}
		}
	})
}

// Every caller of the compare-and-set names an event: casTx is called by
// applyTx alone.
func TestOnlyApplyTxCallsTheCompareAndSet(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := bytes.Count(src, []byte("casTx(ctx, "))
		if n > 0 && f != "transition.go" {
			t.Errorf("%s calls casTx %d times; name an event (applyTx) instead", f, n)
		}
		calls += n
	}
	if calls != 1 {
		t.Errorf("casTx is called %d times; want once, by applyTx", calls)
	}
}
