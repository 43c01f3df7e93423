package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"waymark/internal/store"
)

// event names a transition of a conversation: one row of transitions.
type event string

// The events of a conversation, in the order of transitions.
const (
	evStart            event = "start"
	evSend             event = "send"
	evWithdraw         event = "withdraw"
	evUnclaim          event = "unclaim"
	evClaimAnswer      event = "claim answer"
	evHandBack         event = "hand back"
	evDecidedElsewhere event = "decided elsewhere"
	evFollow           event = "follow"
	evCardShown        event = "card shown"
	evQuestionAsked    event = "question asked"
	evReplyApplied     event = "reply applied"
	evRunCancelled     event = "run cancelled"
	evRunFailed        event = "run failed"
	evStop             event = "stop"
	evFail             event = "fail"
	evRestartTurn      event = "restart turn"
	evClaimEndTour     event = "claim end-tour"
	evEndTour          event = "end tour"
	evGiveBack         event = "give back"
	evSetSkill         event = "set skill"
)

// column is a set of the conversation's columns a transition may change
// besides status and updated_at, which every transition sets.
type column uint16

// The columns a transition may change.
const (
	colLastRun column = 1 << iota
	colPendingRun
	colCard
	colError
	colProgress
	colHighlight
	colSkill
	colProcess
	colFollows
)

var columnNames = []string{"last_run_uuid", "pending_run_uuid", "card", "error", "progress", "highlight", "skill_uid", "process",
	"follows_run"}

// String lists the columns of set c, in table order.
func (c column) String() string {
	var names []string
	for i, n := range columnNames {
		if c&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ", ")
}

// transition is one row of the table: the event, the statuses it may leave
// from, those it may go to, the columns it may change and why it happens.
type transition struct {
	event   event
	from    []Status
	to      []Status
	columns column
	why     string
}

var (
	waiting  = []Status{AwaitingApproval, AwaitingInput}
	settled  = []Status{Idle, Failed}
	anyClaim = []Status{Processing, AwaitingApproval, AwaitingInput} // a settlement's from: its claim, or the waiting status read
)

// transitions is the conversation's state machine: every change of a
// conversation is one of these events, applied by applyTx, which refuses a
// from or to status and a column the event's row does not name. doc.go shows
// it (TestDocShowsTheTransitionTable).
var transitions = []transition{
	{evStart, nil, []Status{Idle}, 0, "a conversation is started (Start inserts it)"},
	{evSend, []Status{Idle, Failed, Processing}, []Status{Processing}, colLastRun | colPendingRun | colCard,
		"a message claims the conversation for its turn (processing: after its withdrawal)"},
	{evWithdraw, waiting, []Status{Processing}, colCard,
		"a message or an end-tour claims the decision it read, to cancel the waiting run"},
	{evUnclaim, []Status{Processing}, waiting, colCard | colError,
		"a claim that changed nothing is given back: the decision waits as before"},
	{evClaimAnswer, waiting, []Status{Processing}, 0,
		"an answer claims the card or question it read; the card column keeps it (decided)"},
	{evHandBack, []Status{Processing}, waiting, colCard | colError,
		"the runtime refused the answer: the decision goes back to the editor with the reason"},
	{evDecidedElsewhere, anyClaim, []Status{Processing}, colFollows | colCard,
		"the run was decided elsewhere and still runs: the conversation follows it"},
	{evFollow, []Status{Processing}, []Status{Processing}, colFollows | colCard,
		"a claim whose run is in a state the caller cannot tell: the conversation follows it"},
	{evCardShown, anyClaim, []Status{AwaitingApproval}, colPendingRun | colCard | colError | colProgress | colHighlight,
		"the run paused for an approval: its card is shown"},
	{evQuestionAsked, anyClaim, []Status{AwaitingInput}, colPendingRun | colCard | colError | colProgress | colHighlight,
		"the run paused for input: its question is asked"},
	{evReplyApplied, anyClaim, []Status{Idle}, colLastRun | colPendingRun | colCard | colError | colProgress | colHighlight,
		"the run completed: its reply is applied"},
	{evRunCancelled, anyClaim, []Status{Idle}, colLastRun | colPendingRun | colCard | colError | colProgress | colHighlight,
		"the run was cancelled (stopped, withdrawn or through the runs API)"},
	{evRunFailed, anyClaim, []Status{Failed}, colLastRun | colPendingRun | colCard | colError | colProgress | colHighlight,
		"the run failed or was refused: its reason is shown"},
	{evStop, []Status{Processing}, []Status{Idle}, colLastRun | colPendingRun | colCard | colError,
		"the editor stopped the turn"},
	{evFail, []Status{Processing}, []Status{Failed}, colCard | colError,
		"a turn or decision failed with an error it cannot hand on (recovery: interrupted)"},
	{evRestartTurn, []Status{Processing}, []Status{Processing}, colCard,
		"recovery: a turn lost before its run began is claimed again, once"},
	{evClaimEndTour, settled, []Status{Processing}, colCard | colError,
		"an end-tour claims the conversation (the error column marks the claim)"},
	{evEndTour, []Status{Processing}, []Status{Idle}, colSkill | colProcess | colLastRun | colPendingRun | colCard | colError |
		colProgress | colHighlight, "the tour ended (by its request, or by recovery of an interrupted end-tour)"},
	{evGiveBack, []Status{Processing}, settled, colCard | colError,
		"an end-tour that failed gives its claim back: the status and error read"},
	{evSetSkill, settled, []Status{Idle}, colSkill | colProcess | colLastRun | colCard | colProgress | colHighlight,
		"the skill changed: a new tour starts with the next message"},
}

// transitionOf is the row of event e.
func transitionOf(e event) (transition, bool) {
	i := slices.IndexFunc(transitions, func(t transition) bool { return t.event == e })
	if i < 0 {
		return transition{}, false
	}
	return transitions[i], true
}

// initialStatus is the status a started conversation has (evStart).
func initialStatus() Status {
	t, _ := transitionOf(evStart)
	return t.to[0]
}

// errTransition refuses a change the table does not allow: a programming
// error, never a race (a race's loser changes nothing and is told so).
var errTransition = errors.New("transition not in the table")

// applyTx applies event e to conversation id: the compare-and-set of change c
// from status from (the status the caller read or its claim), guarded as c
// says. c.status, when empty, is the event's only destination. A from or to
// status the event's row does not allow, or a column it does not name, is
// refused (errTransition) and nothing changes. It reports whether it won.
func applyTx(ctx context.Context, q store.Querier, id int64, e event, from Status, c change, now int64) (bool, error) {
	t, ok := transitionOf(e)
	if !ok {
		return false, fmt.Errorf("conversation %d: %w: unknown event %q", id, errTransition, e)
	}
	if c.status == "" && len(t.to) == 1 {
		c.status = t.to[0]
	}
	if !slices.Contains(t.from, from) || !slices.Contains(t.to, c.status) {
		return false, fmt.Errorf("conversation %d: %w: %s does not lead from %s to %s", id, errTransition, e, from, c.status)
	}
	if extra := c.columns() &^ t.columns; extra != 0 {
		return false, fmt.Errorf("conversation %d: %w: %s may not change %s", id, errTransition, e, extra)
	}
	return casTx(ctx, q, id, from, c, now)
}

// settleEvent is the event by which a settlement gives the conversation
// status to.
func settleEvent(to Status, completed bool) event {
	switch {
	case to == AwaitingApproval:
		return evCardShown
	case to == AwaitingInput:
		return evQuestionAsked
	case to == Failed:
		return evRunFailed
	case completed:
		return evReplyApplied
	}
	return evRunCancelled
}

// transitionTable is the table as doc.go shows it: a code block of the
// package comment.
func transitionTable() string {
	list := func(ss []Status) string {
		if len(ss) == 0 {
			return "(new)"
		}
		var b []string
		for _, s := range ss {
			b = append(b, string(s))
		}
		return strings.Join(b, " | ")
	}
	var b strings.Builder
	for _, t := range transitions {
		fmt.Fprintf(&b, "//\t%s: %s → %s\n//\t    changes: %s\n//\t    why: %s\n", t.event, list(t.from), list(t.to), t.columns, t.why)
	}
	return b.String()
}
