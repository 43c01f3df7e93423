package chat

import (
	"fmt"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/run"
	"waymark/internal/store"
)

// unchangedBy fails unless f leaves conversation id as it was.
func unchangedBy(t *testing.T, h *harness, id int64, f func()) {
	t.Helper()
	before := h.raw(id)
	f()
	if got := h.raw(id); got != before {
		t.Errorf("the conversation changed:\n%s\nwas\n%s", got, before)
	}
}

func (h *harness) read(id int64) func() {
	return func() {
		h.t.Helper()
		if _, err := h.s.Get(ctx, owner, id); err != nil {
			h.t.Fatal(err)
		}
	}
}

// Each recovery path of a processing conversation whose job's worker died
// (recoverInterrupted), as a read and the reaper find it.
func TestEachRecoveryPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"within the lease nothing changes", func(t *testing.T, h *harness) {
			id := h.conversation(Idle, false, "", nil)
			if err := h.s.Send(ctx, owner, id, "Hallo"); err != nil {
				t.Fatal(err)
			}
			h.q.take(t)
			h.clk.Advance(h.s.recovery.lease / 2)
			unchangedBy(t, h, id, h.read(id))
		}},
		{"a job still waiting is left to its worker", func(t *testing.T, h *harness) {
			id := h.conversation(Idle, false, "", nil)
			if err := h.s.Send(ctx, owner, id, "Hallo"); err != nil {
				t.Fatal(err)
			}
			h.clk.Advance(h.s.recovery.lease + time.Second)
			unchangedBy(t, h, id, h.read(id))
		}},
		{"a run still running is left to the runtime's reaper", func(t *testing.T, h *harness) {
			id := h.conversation(Processing, false, "run-7", &agent.Status{Status: run.StatusRunning})
			h.clk.Advance(h.s.recovery.lease + time.Second)
			unchangedBy(t, h, id, h.read(id))
		}},
		{"a turn lost after its run ended takes the run's reply", func(t *testing.T, h *harness) {
			// The runtime keeps the reply with the run's end (KeepReplyTx):
			// the run keeps none below privacy full. The run's name is the
			// test's own (the kept reply goes to every conversation on it).
			runID := fmt.Sprintf("run-kept-%d", time.Now().UnixNano())
			id := h.conversation(Processing, false, runID, &agent.Status{Status: run.StatusCompleted})
			if err := h.db.InTx(ctx, func(tx *store.Tx) error { return KeepReplyTx(ctx, tx, runID, "Erledigt.") }); err != nil {
				t.Fatal(err)
			}
			h.clk.Advance(h.s.recovery.lease + time.Second)
			h.read(id)()
			if r := h.want(id, Idle, ""); r.LastRun != runID {
				t.Errorf("last run %q, want %s", r.LastRun, runID)
			}
			if msgs := h.transcript(id); len(msgs) != 1 || msgs[0].Content != "Erledigt." {
				t.Errorf("transcript %+v, want the run's reply", msgs)
			}
		}},
		{"a turn lost after its run paused shows its card (the reaper)", func(t *testing.T, h *harness) {
			st := waitingForCard("d1")
			id := h.conversation(Processing, true, "run-7", &st)
			h.clk.Advance(h.s.recovery.lease + time.Second)
			if n, err := h.s.Reap(ctx); err != nil || n < 1 {
				t.Fatalf("Reap = %d, %v; want the conversation released", n, err)
			}
			if r := h.want(id, AwaitingApproval, ""); r.Card == nil || r.Card.TurnDigest != "d1" {
				t.Errorf("card %+v, want d1", r.Card)
			}
		}},
		{"a turn lost again after its restart fails as interrupted", func(t *testing.T, h *harness) {
			id := h.conversation(Idle, false, "", nil)
			if err := h.s.Send(ctx, owner, id, "Hallo"); err != nil {
				t.Fatal(err)
			}
			h.q.take(t)
			h.clk.Advance(h.s.recovery.lease + time.Second)
			h.read(id)() // restarted
			h.q.take(t)
			h.clk.Advance(h.s.recovery.lease + time.Second)
			h.read(id)()
			h.want(id, Failed, "failed")
		}},
		{"an answer lost before it reached the run is handed to the workers again", func(t *testing.T, h *harness) {
			id := cardConversation(h)
			if err := h.s.Answer(ctx, owner, id, "d1", AnswerSkip); err != nil {
				t.Fatal(err)
			}
			h.q.take(t)
			h.clk.Advance(h.s.recovery.lease + time.Second)
			unchangedBy(t, h, id, h.read(id))
			if h.q.rescued != 1 || h.jobs() != 1 {
				t.Fatalf("rescued %d, %d jobs; want the answer's job back", h.q.rescued, h.jobs())
			}
			h.work()
			h.want(id, Idle, "")
			if len(h.rt.decisions) != 1 {
				t.Errorf("decisions %+v, want the answer carried out once", h.rt.decisions)
			}
		}},
		{"an answer lost after the runtime took it is settled from the run", func(t *testing.T, h *harness) {
			id := cardConversation(h)
			if err := h.s.Answer(ctx, owner, id, "d1", AnswerApprove); err != nil {
				t.Fatal(err)
			}
			h.q.take(t)
			h.rt.set("run-7", agent.Status{Status: run.StatusCompleted, Answer: "Übernommen."}) // the runtime took it; the worker died
			h.clk.Advance(h.s.recovery.lease + time.Second)
			h.read(id)()
			if r := h.want(id, Idle, ""); r.LastRun != "run-7" || r.Decided != nil {
				t.Errorf("last run %q, decided %+v; want settled after run-7", r.LastRun, r.Decided)
			}
			if h.q.rescued != 0 {
				t.Error("a decision the run took was handed to the workers again")
			}
		}},
		{"a question's answer lost before it reached the run is handed to the workers again", func(t *testing.T, h *harness) {
			st := waitingForInput("q1")
			id := h.conversation(AwaitingInput, false, "run-7", &st)
			if err := h.s.AnswerQuestion(ctx, owner, id, "q1", "rot", ""); err != nil {
				t.Fatal(err)
			}
			h.q.take(t)
			h.clk.Advance(h.s.recovery.lease + time.Second)
			unchangedBy(t, h, id, h.read(id))
			if h.q.rescued != 1 {
				t.Fatalf("rescued %d, want the answer's job back", h.q.rescued)
			}
			h.work()
			h.want(id, Idle, "")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, db *store.DB) { tc.run(t, newHarness(t, db)) })
		})
	}
}
