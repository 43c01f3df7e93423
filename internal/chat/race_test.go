package chat

import (
	"errors"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/run"
	"waymark/internal/store"
)

// race runs loser, which calls winner at its claim (the harness's hook for
// op): both read the conversation, the winner claims first. It fails unless
// loser returns want and leaves the conversation, its transcript and the
// queue as the winner left them.
func race(t *testing.T, h *harness, id int64, op string, winner func() error, loser func() error, want error) {
	t.Helper()
	var after string
	var jobs int
	h.at(op, func() {
		if err := winner(); err != nil {
			t.Errorf("the winner: %v", err)
		}
		after, jobs = h.raw(id), h.jobs()
	})
	if err := loser(); !errors.Is(err, want) {
		t.Fatalf("the loser = %v, want %v", err, want)
	}
	if after == "" {
		t.Fatal("the loser never reached its claim")
	}
	if got := h.raw(id); got != after {
		t.Errorf("the loser changed the conversation:\n%s\nthe winner left\n%s", got, after)
	}
	if h.jobs() != jobs {
		t.Errorf("the loser queued a job: %d, the winner left %d", h.jobs(), jobs)
	}
}

// cardConversation is a process conversation awaiting approval of card d1
// on run-7.
func cardConversation(h *harness) int64 {
	st := waitingForCard("d1")
	return h.conversation(AwaitingApproval, true, "run-7", &st)
}

func (h *harness) answer(id int64, a string) func() error {
	return func() error { return h.s.Answer(ctx, owner, id, "d1", a) }
}

func (h *harness) send(id int64) func() error {
	return func() error { return h.s.Send(ctx, owner, id, "Lieber anders") }
}

func (h *harness) endTour(id int64) func() error {
	return func() error { _, err := h.s.EndTour(ctx, owner, id); return err }
}

// An answer and a message on one card, in both orders: the first claim wins,
// the other changes nothing (ADR-022's races).
func TestAnAnswerAndAMessageRaceOneWins(t *testing.T) {
	t.Run("the message first", func(t *testing.T) {
		eachDB(t, func(t *testing.T, db *store.DB) {
			h := newHarness(t, db)
			id := cardConversation(h)
			race(t, h, id, "answer", h.send(id), h.answer(id, AnswerApprove), ErrStaleCard)
			h.work()
			h.want(id, Idle, "")
			if len(h.rt.decisions) != 0 {
				t.Errorf("the lost answer reached the runtime: %+v", h.rt.decisions)
			}
		})
	})
	t.Run("the answer first", func(t *testing.T) {
		eachDB(t, func(t *testing.T, db *store.DB) {
			h := newHarness(t, db)
			id := cardConversation(h)
			race(t, h, id, "message", h.answer(id, AnswerApprove), h.send(id), ErrBusy)
			if st, _ := h.rt.get("run-7"); st.Status != run.StatusWaitingForApproval {
				t.Errorf("the lost message cancelled the run: %s", st.Status)
			}
			h.work()
			h.want(id, Idle, "")
			if len(h.rt.decisions) != 1 {
				t.Errorf("decisions %+v, want the answer's", h.rt.decisions)
			}
		})
	})
}

// Two answers on one card, in both orders: the first is carried out, the
// second is stale and changes nothing.
func TestTwoAnswersRaceTheFirstIsCarriedOut(t *testing.T) {
	for _, order := range [][2]string{{AnswerApprove, AnswerCancel}, {AnswerCancel, AnswerApprove}} {
		t.Run(order[0]+" first", func(t *testing.T) {
			eachDB(t, func(t *testing.T, db *store.DB) {
				h := newHarness(t, db)
				id := cardConversation(h)
				race(t, h, id, "answer", h.answer(id, order[0]), h.answer(id, order[1]), ErrStaleCard)
				h.work()
				if len(h.rt.decisions) != 1 || h.rt.decisions[0].Approve != (order[0] == AnswerApprove) {
					t.Errorf("decisions %+v, want the one of %s", h.rt.decisions, order[0])
				}
			})
		})
	}
}

// An answer and an end-tour on one card, in both orders: the first claim
// wins, the other changes nothing.
func TestAnAnswerAndAnEndTourRaceOneWins(t *testing.T) {
	t.Run("the end-tour first", func(t *testing.T) {
		eachDB(t, func(t *testing.T, db *store.DB) {
			h := newHarness(t, db)
			id := cardConversation(h)
			race(t, h, id, "answer", h.endTour(id), h.answer(id, AnswerApprove), ErrStaleCard)
			if r := h.want(id, Idle, ""); r.Process {
				t.Error("the tour did not end")
			}
			if len(h.rt.decisions) != 0 {
				t.Errorf("the lost answer reached the runtime: %+v", h.rt.decisions)
			}
		})
	})
	t.Run("the answer first", func(t *testing.T) {
		eachDB(t, func(t *testing.T, db *store.DB) {
			h := newHarness(t, db)
			id := cardConversation(h)
			race(t, h, id, "end-tour", h.answer(id, AnswerApprove), h.endTour(id), ErrBusy)
			h.work()
			if r := h.want(id, Idle, ""); !r.Process || len(h.rt.decisions) != 1 {
				t.Errorf("process %v, decisions %+v; want the tour going on after the answer", r.Process, h.rt.decisions)
			}
		})
	})
}

// A stop and the turn's reply, in both orders: a reply applied first stands
// (the stop finds no turn running); a stop first stands (the late reply
// changes nothing).
func TestAStopAndTheRepliesRaceOneWins(t *testing.T) {
	t.Run("the reply first", func(t *testing.T) {
		eachDB(t, func(t *testing.T, db *store.DB) {
			h := newHarness(t, db)
			id := h.conversation(Processing, false, "run-7", &agent.Status{Status: run.StatusRunning})
			claim := h.row(id).UpdatedAt
			reply := func() error {
				h.rt.set("run-7", agent.Status{Status: run.StatusCompleted, Answer: "Fertig."})
				h.s.settle.apply(ctx, id, claim, "run-7", "Fertig.")
				return nil
			}
			race(t, h, id, "stop", reply, func() error { _, err := h.s.Stop(ctx, owner, id); return err }, ErrNotRunning)
			h.want(id, Idle, "")
			if msgs := h.transcript(id); len(msgs) != 1 || msgs[0].Content != "Fertig." {
				t.Errorf("transcript %+v, want the reply", msgs)
			}
		})
	})
	t.Run("the stop first", func(t *testing.T) {
		eachDB(t, func(t *testing.T, db *store.DB) {
			h := newHarness(t, db)
			id := h.conversation(Processing, false, "run-7", &agent.Status{Status: run.StatusRunning})
			claim := h.row(id).UpdatedAt
			if _, err := h.s.Stop(ctx, owner, id); err != nil {
				t.Fatal(err)
			}
			before := h.raw(id)
			h.clk.Advance(time.Second)
			h.s.settle.apply(ctx, id, claim, "run-7", "Fertig.") // the cancelled run's late result
			if got := h.raw(id); got != before {
				t.Errorf("the late reply changed the stopped conversation:\n%s\nwas\n%s", got, before)
			}
			if n := h.lastNotice(id); n != NoticeStopped {
				t.Errorf("last notice %q, want %s", n, NoticeStopped)
			}
		})
	})
}

// A late recovery and a claimed answer, in both orders: a recovery that
// settles a lost turn first shows its card, which the editor answers; a
// recovery's late result after the answer's claim changes nothing — the
// answer is carried out (the crash runs: a late recovery took back a
// claimed answer).
func TestALateRecoveryAndAClaimedAnswerRaceTheAnswerStands(t *testing.T) {
	for _, order := range []string{"the recovery first", "the answer first"} {
		t.Run(order, func(t *testing.T) {
			eachDB(t, func(t *testing.T, db *store.DB) {
				h := newHarness(t, db)
				// A turn whose worker died after its run paused on card d1.
				st := waitingForCard("d1")
				id := h.conversation(Processing, true, "run-7", &st)
				turnAt := h.row(id).UpdatedAt
				h.clk.Advance(h.s.recovery.lease + time.Second)
				if order == "the answer first" {
					// Another process settled the turn; the editor answered.
					h.s.settle.apply(ctx, id, turnAt, "run-7", "")
					if err := h.s.Answer(ctx, owner, id, "d1", AnswerApprove); err != nil {
						t.Fatal(err)
					}
				} else if _, err := h.s.Get(ctx, owner, id); err != nil { // the recovery
					t.Fatal(err)
				}
				if order == "the recovery first" {
					h.want(id, AwaitingApproval, "")
					if err := h.s.Answer(ctx, owner, id, "d1", AnswerApprove); err != nil {
						t.Fatal(err)
					}
				}
				claimed := h.raw(id)
				h.s.settle.apply(ctx, id, turnAt, "run-7", "") // the recovery's late result for the turn
				if got := h.raw(id); got != claimed {
					t.Errorf("the late recovery changed the claimed answer:\n%s\nwas\n%s", got, claimed)
				}
				h.work()
				h.want(id, Idle, "")
				if len(h.rt.decisions) != 1 {
					t.Errorf("decisions %+v, want the answer's", h.rt.decisions)
				}
			})
		})
	}
}
