package adr022_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"waymark/internal/chat"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// keepClaims copies every row of conversations as an update leaves it
// processing into the table claims: what a process killed right after such
// a claim committed leaves behind (the crash run kills `serve` 10–20 ms
// into the request, after its claim and before its end).
func keepClaims(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	stmts := []string{"CREATE TABLE claims AS SELECT * FROM conversations WHERE 1 = 0"}
	if db.Dialect() == store.Postgres {
		stmts = append(stmts,
			`CREATE FUNCTION keep_claim() RETURNS trigger AS $$ BEGIN INSERT INTO claims SELECT NEW.*; RETURN NEW; END $$ LANGUAGE plpgsql`,
			`CREATE TRIGGER keep_claim AFTER UPDATE ON conversations FOR EACH ROW WHEN (NEW.status = 'processing') EXECUTE FUNCTION keep_claim()`)
	} else {
		stmts = append(stmts,
			`CREATE TRIGGER keep_claim AFTER UPDATE ON conversations WHEN NEW.status = 'processing'
			BEGIN INSERT INTO claims SELECT * FROM conversations WHERE id = NEW.id; END`)
	}
	for _, q := range stmts {
		if _, err := db.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// killedAfterClaim puts conversation id back into the state the last claim
// kept (keepClaims) left it in, a lease and more ago, and takes away what
// the request wrote after its claim (the tour_ended line): the request's
// process died between its claim and its end. What it did elsewhere — the
// process ended in the runtime — stays.
func killedAfterClaim(t *testing.T, db *store.DB, id int64) {
	t.Helper()
	ctx := context.Background()
	const cols = "status, updated_at, error, skill_uid, process, last_run_uuid, pending_run_uuid, card, progress, highlight, follows_run"
	if _, err := db.Exec(ctx, "UPDATE conversations SET ("+cols+") = (SELECT "+cols+
		" FROM claims WHERE claims.id = ? ORDER BY claims.updated_at DESC LIMIT 1) WHERE id = ?", id, id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "UPDATE conversations SET updated_at = updated_at - ? WHERE id = ?", time.Hour.Microseconds(), id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "DELETE FROM conversation_messages WHERE conversation_id = ? AND notice = ?", id, chat.NoticeTourEnded); err != nil {
		t.Fatal(err)
	}
	var status string
	if err := db.QueryRow(ctx, "SELECT status FROM conversations WHERE id = ?", id).Scan(&status); err != nil || status != "processing" {
		t.Fatalf("after the kill: status %q (%v), want processing", status, err)
	}
}

// The crash run: `serve` killed 10–20 ms into an end-tour on a completed
// tour left the conversation processing on the end-tour's claim, with no
// turn, job or run; the recovery after the restart read that as a turn lost
// before its run began, "restarted" it (turn_restarted) and the
// conversation ended failed. Recovery restarts only a turn that exists: the
// end-tour the editor asked for is carried out — idle, the tour ended, no
// failure, nothing sent to the model — whether a read or the reaper finds
// it first, and an end-tour the editor sends again afterwards answers the
// same.
func TestAnEndTourOnACompletedTourInterruptedByACrashLeavesTheConversationIdle(t *testing.T) {
	for _, recovery := range []string{"read", "reaper"} {
		t.Run(recovery, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				e := newEnv(t, db)
				e.LLM.Add(write("c1", `{"description": "a"}`), completion(), answer("Fertig."))
				erika := e.As(wt.Erika)
				conv := decided(t, e, erika, said(t, e, erika, opened(t, erika, seo).ID, "Los"), "apply")
				if conv.Status != "idle" || conv.Skill == nil {
					t.Fatalf("the completed tour = %+v", conv)
				}
				completed := conv.LastRunUUID
				asked := len(e.LLM.Requests())

				keepClaims(t, db)
				if _, r := erika.EndTour(conv.ID); r.Status != http.StatusOK {
					t.Fatalf("end-tour = %d: %s", r.Status, r.Body)
				}
				killedAfterClaim(t, db, conv.ID)

				switch recovery {
				case "read":
					// The editor's screen reads the conversation again.
				case "reaper":
					if n, err := e.App.Chat.Reap(ctx); err != nil || n != 1 {
						t.Fatalf("Reap = %d, %v; want the one conversation moved on", n, err)
					}
				}
				got := current(t, e, erika, conv.ID)
				if got.Status != "idle" || got.Error != "" || got.Skill != nil || got.LastRunUUID != completed {
					t.Fatalf("after the recovery: status %v, error %q, skill %v, last run %v; want idle, no skill, last run %v",
						got.Status, got.Error, got.Skill, got.LastRunUUID, completed)
				}
				if n := lastNotice(got); n != chat.NoticeTourEnded {
					t.Errorf("after the recovery the last notice is %q, want %s: %+v", n, chat.NoticeTourEnded, got.Messages)
				}
				for _, m := range got.Messages {
					if m.Notice == chat.NoticeTurnRestarted || m.Notice == "failed" {
						t.Errorf("the transcript shows %q: a turn that did not exist was restarted", m.Notice)
					}
				}
				if n := len(e.LLM.Requests()); n != asked {
					t.Errorf("the model got %d requests after the tour, want none", n-asked)
				}
				if st := erika.MustRun(completed); st.Status != "completed" || !st.HoldsProcessIs(false) {
					t.Errorf("the completed run = status %v, holdsProcess %v", st.Status, st.HoldsProcess)
				}

				// The editor, whose end-tour request failed with the crash, ends the tour again.
				again, r := erika.EndTour(conv.ID)
				if r.Status != http.StatusOK || again.Status != "idle" || again.Error != "" {
					t.Fatalf("end-tour again = %d %+v, want 200 idle", r.Status, again)
				}
				ended := 0
				for _, m := range again.Messages {
					if m.Notice == chat.NoticeTourEnded {
						ended++
					}
				}
				if ended != 1 {
					t.Errorf("the transcript shows %d tour_ended lines, want 1: %+v", ended, again.Messages)
				}
				// The chat goes on without the process.
				e.LLM.Add(answer("ohne Tour"))
				after := said(t, e, erika, conv.ID, "Noch etwas")
				if after.Status != "idle" || after.Messages[len(after.Messages)-1].Content != "ohne Tour" {
					t.Errorf("a message after the ended tour = %+v", after)
				}
			})
		})
	}
}
