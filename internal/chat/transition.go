package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
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

// change is a compare-and-set of a conversation from one status to another
// with the columns to set; it reports whether it won.
type change struct {
	status              Status
	lastRun, pendingRun *string
	card                **Card     // the card, when the new status is awaiting_approval
	question            **Question // the question, when the new status is awaiting_input
	follows             bool       // the conversation follows a run decided elsewhere
	progress, highlight *json.RawMessage
	err                 *string
	// keepCard leaves the card column as it is: a claim of a card's
	// decision or a question's answer (processing) keeps the card decided
	// (row.Decided) or the question answered (row.Answered).
	keepCard bool
	skill    *int64
	process  *bool
	// seen, when set, makes the change win only while the conversation still
	// waits for the very decision the caller read (the card column as stored);
	// seenFollow only while it still follows the run it followed.
	seen       *string
	seenFollow *string
	// seenRun, when set, makes the change win only while the conversation's
	// pending run is this one: a late result of a run the conversation has
	// moved past (a process that lost its lease and came back) changes nothing.
	seenRun *string
	// seenAt, when set, makes the change win only while the conversation is
	// still in the state the caller read (its updated_at, unix
	// microseconds): processing for one turn or decision is not processing
	// for the next one on the same run.
	seenAt *int64
}

// guarded adds to c the guard of a change that acts on r as read, not under
// a claim of its own: from is r's status then. A caller holding the claim
// (from differs) needs none.
func (c change) guarded(r row, from Status) change {
	switch {
	case from != r.Status:
	case from == AwaitingApproval || from == AwaitingInput:
		c.seen = &r.card
	case from == Processing:
		// A result of the run is the state of one processing only — the
		// turn, or a decision claimed on it since (the crash proof: a
		// requeued turn's late result set a card back on the conversation
		// after its editor had answered it).
		at := r.UpdatedAt.UnixMicro()
		c.seenAt = &at
		if r.Follows {
			c.seenFollow = &r.PendingRun
		}
	}
	return c
}

// cardValue is the value change c gives the card column, and whether it
// gives it one.
//
// The card column holds the decision the conversation waits for — a card
// while awaiting approval, a question while awaiting input — and nothing
// else: every change to a status that waits for none clears it (a decided,
// withdrawn or handed-back card leaves) — except the claim of a card's
// decision or a question's answer (keepCard), which keeps the card or
// question until the decision is carried out.
func (c change) cardValue() (string, bool) {
	decision := ""
	switch {
	case c.keepCard:
		return "", false
	case c.status == AwaitingApproval && c.card != nil:
		if *c.card != nil {
			b, _ := json.Marshal(*c.card)
			decision = string(b)
		}
	case c.status == AwaitingInput && c.question != nil:
		if q := *c.question; q != nil {
			b, _ := json.Marshal(storedQuestion{Question: *q, Schema: q.Schema})
			decision = string(b)
		}
	case c.status == AwaitingApproval || c.status == AwaitingInput:
		return "", false
	}
	return decision, true
}

// columns is the set of columns change c sets besides status and
// updated_at (follows_run: only when it sets it; every other change clears
// it).
func (c change) columns() column {
	var cols column
	for _, x := range []struct {
		set bool
		col column
	}{
		{c.lastRun != nil, colLastRun}, {c.pendingRun != nil, colPendingRun}, {c.err != nil, colError},
		{c.progress != nil, colProgress}, {c.highlight != nil, colHighlight}, {c.skill != nil, colSkill},
		{c.process != nil, colProcess}, {c.follows, colFollows},
	} {
		if x.set {
			cols |= x.col
		}
	}
	if _, ok := c.cardValue(); ok {
		cols |= colCard
	}
	return cols
}

// casTx is the compare-and-set of change c from status from: the one
// statement that changes a conversation, applied by applyTx only (the
// transition table). Every change not naming follows ends following a run.
func casTx(ctx context.Context, q store.Querier, id int64, from Status, c change, now int64) (bool, error) {
	set := "status = ?, updated_at = ?, follows_run = ?"
	args := []any{string(c.status), now, c.follows}
	str := func(col string, v *string) {
		if v != nil {
			set += ", " + col + " = ?"
			args = append(args, *v)
		}
	}
	str("last_run_uuid", c.lastRun)
	str("pending_run_uuid", c.pendingRun)
	str("error", c.err)
	if decision, ok := c.cardValue(); ok {
		str("card", &decision)
	}
	raw := func(col string, v *json.RawMessage) {
		if v != nil {
			s := string(*v)
			str(col, &s)
		}
	}
	raw("progress", c.progress)
	raw("highlight", c.highlight)
	if c.skill != nil {
		set += ", skill_uid = ?"
		args = append(args, *c.skill)
	}
	if c.process != nil {
		set += ", process = ?"
		args = append(args, *c.process)
	}
	where := " WHERE id = ? AND status = ?"
	args = append(args, id, string(from))
	if c.seen != nil {
		where += " AND card = ?"
		args = append(args, *c.seen)
	}
	if c.seenRun != nil {
		where += " AND pending_run_uuid = ?"
		args = append(args, *c.seenRun)
	}
	if c.seenFollow != nil {
		where += " AND follows_run = ? AND pending_run_uuid = ?"
		args = append(args, true, *c.seenFollow)
	}
	if c.seenAt != nil {
		where += " AND updated_at = ?"
		args = append(args, *c.seenAt)
	}
	res, err := q.Exec(ctx, "UPDATE conversations SET "+set+where, args...)
	if err != nil {
		return false, fmt.Errorf("conversation %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if n == 1 && err == nil {
		// Wakes the conversation's waiters once committed (WaitChange).
		if err := store.SignalAfter(ctx, q, changeKey(id)); err != nil {
			return false, fmt.Errorf("conversation %d: %w", id, err)
		}
	}
	return n == 1, err
}

// changeKey is the key of a conversation's change signal (store.Watch).
func changeKey(id int64) string { return "conversation:" + strconv.FormatInt(id, 10) }
