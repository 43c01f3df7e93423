package chat

import (
	"context"
	"errors"
	"testing"

	"waymark/internal/agent"
	"waymark/internal/run"
	"waymark/internal/store"
)

// transitionCase drives one or more events of the table through the
// service's own paths, on the fake runtime and queue.
type transitionCase struct {
	name   string
	events []event
	run    func(t *testing.T, h *harness)
}

var ctx = context.Background()

var transitionCases = []transitionCase{
	{"a message is sent and its reply applied", []event{evSend, evReplyApplied}, func(t *testing.T, h *harness) {
		id := h.conversation(Idle, false, "", nil)
		if err := h.s.Send(ctx, owner, id, "Hallo"); err != nil {
			t.Fatal(err)
		}
		h.want(id, Processing, "")
		h.work()
		r := h.want(id, Idle, "")
		msgs := h.transcript(id)
		if r.LastRun != "run-1" || r.PendingRun != "" || len(msgs) != 2 || msgs[1].Content != "Erledigt." {
			t.Errorf("after the turn: last run %q, pending %q, transcript %+v; want run-1's reply", r.LastRun, r.PendingRun, msgs)
		}
	}},
	{"a turn's run pauses on a card", []event{evCardShown}, func(t *testing.T, h *harness) {
		h.rt.next = waitingForCard("d1")
		id := h.conversation(Idle, false, "", nil)
		if err := h.s.Send(ctx, owner, id, "Bitte ändern"); err != nil {
			t.Fatal(err)
		}
		h.work()
		r := h.want(id, AwaitingApproval, "")
		if r.Card == nil || r.Card.TurnDigest != "d1" || r.PendingRun != "run-1" {
			t.Errorf("card %+v on run %q, want d1 on run-1", r.Card, r.PendingRun)
		}
	}},
	{"a turn's run pauses on a question", []event{evQuestionAsked}, func(t *testing.T, h *harness) {
		h.rt.next = waitingForInput("q1")
		id := h.conversation(Idle, false, "", nil)
		if err := h.s.Send(ctx, owner, id, "Bitte fragen"); err != nil {
			t.Fatal(err)
		}
		h.work()
		r := h.want(id, AwaitingInput, "")
		if r.Question == nil || r.Question.TurnDigest != "q1" || len(r.Question.Options) != 2 {
			t.Errorf("question %+v, want q1 with two options", r.Question)
		}
	}},
	{"a turn's run is cancelled", []event{evRunCancelled}, func(t *testing.T, h *harness) {
		h.rt.next = agent.Status{Status: run.StatusCancelled, TerminationReason: run.ReasonCancelled}
		id := h.conversation(Idle, false, "", nil)
		if err := h.s.Send(ctx, owner, id, "Hallo"); err != nil {
			t.Fatal(err)
		}
		h.work()
		h.want(id, Idle, "")
		if n := h.lastNotice(id); n != NoticeStopped {
			t.Errorf("last notice %q, want %s", n, NoticeStopped)
		}
	}},
	{"a turn's run fails", []event{evRunFailed}, func(t *testing.T, h *harness) {
		h.rt.next = agent.Status{Status: run.StatusFailed, TerminationReason: "budget_exceeded"}
		id := h.conversation(Idle, false, "", nil)
		if err := h.s.Send(ctx, owner, id, "Hallo"); err != nil {
			t.Fatal(err)
		}
		h.work()
		h.want(id, Failed, "budget_exceeded")
	}},
	{"a turn fails with an error it cannot hand on", []event{evFail}, func(t *testing.T, h *harness) {
		h.rt.runErr = errBoom
		id := h.conversation(Idle, false, "", nil)
		if err := h.s.Send(ctx, owner, id, "Hallo"); err != nil {
			t.Fatal(err)
		}
		h.work()
		h.want(id, Failed, "failed")
	}},
	{"an answer is claimed and decided", []event{evClaimAnswer}, func(t *testing.T, h *harness) {
		st := waitingForCard("d1")
		id := h.conversation(AwaitingApproval, false, "run-7", &st)
		if err := h.s.Answer(ctx, owner, id, "d1", AnswerApprove); err != nil {
			t.Fatal(err)
		}
		r := h.want(id, Processing, "")
		if r.Decided == nil || r.Decided.TurnDigest != "d1" {
			t.Errorf("the claim keeps the card decided: %+v", r.Decided)
		}
		h.work()
		h.want(id, Idle, "")
		if len(h.rt.decisions) != 1 || !h.rt.decisions[0].Approve {
			t.Errorf("decisions %+v, want one approval", h.rt.decisions)
		}
		// The decided card's outcome commits with the run's state, once.
		if got, err := outcomes(ctx, h.db, id); err != nil || len(got) != 1 || got[0].Run != "run-7" {
			t.Errorf("outcomes %+v, %v; want the card's one", got, err)
		}
	}},
	{"a question's answer is claimed and carried out", []event{evClaimAnswer}, func(t *testing.T, h *harness) {
		st := waitingForInput("q1")
		id := h.conversation(AwaitingInput, false, "run-7", &st)
		if err := h.s.AnswerQuestion(ctx, owner, id, "q1", "rot", ""); err != nil {
			t.Fatal(err)
		}
		if r := h.want(id, Processing, ""); r.Answered == nil {
			t.Error("the claim keeps the question answered")
		}
		h.work()
		h.want(id, Idle, "")
	}},
	{"a refused answer is handed back", []event{evHandBack}, func(t *testing.T, h *harness) {
		st := waitingForCard("d1")
		id := h.conversation(AwaitingApproval, false, "run-7", &st)
		h.rt.refuse = agent.ErrPreviewChanged
		if err := h.s.Answer(ctx, owner, id, "d1", AnswerApprove); err != nil {
			t.Fatal(err)
		}
		h.work()
		r := h.want(id, AwaitingApproval, agent.ErrPreviewChanged.Code())
		if r.Card == nil || r.Card.TurnDigest != "d1" {
			t.Errorf("card %+v, want d1 back", r.Card)
		}
	}},
	{"a message withdraws a waiting card", []event{evWithdraw, evSend}, func(t *testing.T, h *harness) {
		st := waitingForCard("d1")
		id := h.conversation(AwaitingApproval, true, "run-7", &st)
		if err := h.s.Send(ctx, owner, id, "Lieber anders"); err != nil {
			t.Fatal(err)
		}
		r := h.want(id, Processing, "")
		if r.LastRun != "run-7" || r.Card != nil || r.Decided != nil {
			t.Errorf("after the withdrawal: last run %q, card %+v; want run-7 as predecessor, no card", r.LastRun, r.Card)
		}
		if got, _ := h.rt.get("run-7"); got.Status != run.StatusCancelled {
			t.Errorf("the withdrawn run is %s, want cancelled", got.Status)
		}
	}},
	{"a withdrawal whose cancel fails gives its claim back", []event{evWithdraw, evUnclaim}, func(t *testing.T, h *harness) {
		st := waitingForCard("d1")
		id := h.conversation(AwaitingApproval, true, "run-7", &st)
		h.rt.cancelErr = errBoom
		if err := h.s.Send(ctx, owner, id, "Lieber anders"); !errors.Is(err, errBoom) {
			t.Fatalf("Send = %v, want the cancel's error", err)
		}
		if r := h.want(id, AwaitingApproval, ""); r.Card == nil || r.Card.TurnDigest != "d1" {
			t.Errorf("card %+v, want d1 waiting as before", r.Card)
		}
	}},
	{"a withdrawal that cannot read its run follows it", []event{evWithdraw, evFollow}, func(t *testing.T, h *harness) {
		st := waitingForCard("d1")
		id := h.conversation(AwaitingApproval, true, "run-7", &st)
		h.rt.set("run-7", agent.Status{Status: run.StatusRunning}) // decided elsewhere: the cancel finds it running
		h.rt.statusErr = errBoom
		if err := h.s.Send(ctx, owner, id, "Lieber anders"); !errors.Is(err, errBoom) {
			t.Fatalf("Send = %v, want the status's error", err)
		}
		h.rt.statusErr = nil
		if r := h.want(id, Processing, ""); !r.Follows {
			t.Error("the conversation does not follow the run")
		}
	}},
	{"a card decided elsewhere is followed until its run ends", []event{evDecidedElsewhere, evReplyApplied}, func(t *testing.T, h *harness) {
		st := waitingForCard("d1")
		id := h.conversation(AwaitingApproval, false, "run-7", &st)
		h.rt.set("run-7", agent.Status{Status: run.StatusRunning})
		if _, err := h.s.Get(ctx, owner, id); err != nil {
			t.Fatal(err)
		}
		if r := h.want(id, Processing, ""); !r.Follows || r.Decided == nil {
			t.Fatalf("follows %v, decided %+v; want following with the card kept", r.Follows, r.Decided)
		}
		h.rt.set("run-7", agent.Status{Status: run.StatusCompleted, Answer: "Fertig."})
		if _, err := h.s.Get(ctx, owner, id); err != nil {
			t.Fatal(err)
		}
		if r := h.want(id, Idle, ""); r.Follows || r.LastRun != "run-7" {
			t.Errorf("follows %v, last run %q; want idle after run-7", r.Follows, r.LastRun)
		}
	}},
	{"the editor stops a running turn", []event{evStop}, func(t *testing.T, h *harness) {
		id := h.conversation(Processing, false, "run-7", &agent.Status{Status: run.StatusRunning})
		if _, err := h.s.Stop(ctx, owner, id); err != nil {
			t.Fatal(err)
		}
		if r := h.want(id, Idle, ""); r.LastRun != "run-7" || r.PendingRun != "" {
			t.Errorf("last run %q, pending %q; want run-7 as predecessor", r.LastRun, r.PendingRun)
		}
		if n := h.lastNotice(id); n != NoticeStopped {
			t.Errorf("last notice %q, want %s", n, NoticeStopped)
		}
	}},
	{"a turn lost before its run began is started again", []event{evRestartTurn}, func(t *testing.T, h *harness) {
		id := h.conversation(Idle, false, "", nil)
		if err := h.s.Send(ctx, owner, id, "Hallo"); err != nil {
			t.Fatal(err)
		}
		h.q.take(t) // its worker dies
		h.clk.Advance(h.s.recovery.lease + 1)
		if _, err := h.s.Get(ctx, owner, id); err != nil {
			t.Fatal(err)
		}
		h.want(id, Processing, "")
		if n := h.lastNotice(id); n != NoticeTurnRestarted || h.jobs() != 1 {
			t.Fatalf("last notice %q, %d jobs; want %s and its job", n, h.jobs(), NoticeTurnRestarted)
		}
		h.work()
		h.want(id, Idle, "")
	}},
	{"an end-tour claims the conversation and ends the tour", []event{evClaimEndTour, evEndTour}, func(t *testing.T, h *harness) {
		id := h.conversation(Idle, true, "", nil)
		if _, err := h.s.EndTour(ctx, owner, id); err != nil {
			t.Fatal(err)
		}
		if r := h.want(id, Idle, ""); r.Process || r.EndingTour {
			t.Errorf("process %v, ending %v; want the tour ended", r.Process, r.EndingTour)
		}
		if n := h.lastNotice(id); n != NoticeTourEnded {
			t.Errorf("last notice %q, want %s", n, NoticeTourEnded)
		}
	}},
	{"an end-tour that fails gives its claim back", []event{evClaimEndTour, evGiveBack}, func(t *testing.T, h *harness) {
		id := h.conversation(Failed, true, "", nil)
		if _, err := h.db.Exec(ctx, "UPDATE conversations SET last_run_uuid = 'run-7', error = 'budget_exceeded' WHERE id = ?", id); err != nil {
			t.Fatal(err)
		}
		h.s.tours.ender = failingEnder{}
		if _, err := h.s.EndTour(ctx, owner, id); !errors.Is(err, errBoom) {
			t.Fatalf("EndTour = %v, want the ender's error", err)
		}
		if r := h.want(id, Failed, "budget_exceeded"); !r.Process {
			t.Error("the tour was ended")
		}
	}},
	{"the skill is set on an idle conversation", []event{evSetSkill}, func(t *testing.T, h *harness) {
		id := h.conversation(Failed, true, "", nil)
		if _, err := h.s.SetSkill(ctx, owner, id, 0); err != nil {
			t.Fatal(err)
		}
		if r := h.want(id, Idle, ""); r.Process || r.Skill != 0 {
			t.Errorf("process %v, skill %d; want none", r.Process, r.Skill)
		}
	}},
}

// failingEnder fails every end of a process.
type failingEnder struct{}

func (failingEnder) EndProcess(ctx context.Context, actor int64, id string) (bool, run.Status, error) {
	return false, "", errBoom
}

// Every transition of the table, driven through the service's own paths
// (requests, jobs, reads) on the fake runtime and queue, on both databases.
func TestEveryTransitionOfTheTable(t *testing.T) {
	for _, tc := range transitionCases {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, db *store.DB) { tc.run(t, newHarness(t, db)) })
		})
	}
}

// A new transition is one row in the table and one case above: an event no
// case drives fails here (start is Start's insert, which needs the
// configuration catalogue: initialStatus names its status).
func TestEveryEventOfTheTableHasACase(t *testing.T) {
	driven := map[event]bool{evStart: true}
	for _, tc := range transitionCases {
		for _, e := range tc.events {
			if _, ok := transitionOf(e); !ok {
				t.Errorf("case %q names %q, not in the table", tc.name, e)
			}
			driven[e] = true
		}
	}
	for _, tr := range transitions {
		if !driven[tr.event] {
			t.Errorf("no case drives the event %q", tr.event)
		}
	}
}
