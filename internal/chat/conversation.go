package chat

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"waymark/internal/content"
	"waymark/internal/cost"
	"waymark/internal/fault"
	"waymark/internal/serp"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// Status is a conversation's state; every change is a compare-and-set on it.
type Status string

// The conversation statuses.
const (
	Idle             Status = "idle"
	Processing       Status = "processing"
	AwaitingApproval Status = "awaiting_approval"
	AwaitingInput    Status = "awaiting_input"
	Failed           Status = "failed"
)

// Answers of a card: the process answers of a process-run write card, and
// approve/cancel for every other card.
const (
	AnswerApply   = "apply"
	AnswerVariant = "variant"
	AnswerSkip    = "skip"
	AnswerKeep    = "keep"
	AnswerApprove = "approve"
	AnswerCancel  = "cancel"
)

// Card is the decision a conversation waits for, as the server decided it.
type Card struct {
	RunUUID        string     `json:"-"`
	TurnDigest     string     `json:"turnDigest"`
	Answers        []string   `json:"answers"`
	ApproveBlocked string     `json:"approveBlocked"`
	Calls          []CardCall `json:"calls"`
	// Cost is what the run that proposed the card cost so far (views only).
	Cost *cost.Total `json:"cost,omitempty"`
}

// CardCall is one pending call of a card.
type CardCall struct {
	ID            string             `json:"id"`
	Tool          string             `json:"tool"`
	DeclaresWrite bool               `json:"declaresWrite"`
	Target        *tool.Target       `json:"target,omitempty"`
	Heading       string             `json:"heading,omitempty"`
	Preview       []tool.PreviewItem `json:"preview,omitempty"`
	// PreviewError is why the call has no preview (its arguments are
	// invalid, it names a field the user may not edit …), as the runs API
	// shows it; such a card offers no apply.
	PreviewError string `json:"previewError,omitempty"`
	// Landing is where the write will land (live or a draft workspace),
	// when the site's CMS decides it (beside TYPO3 with the bridge).
	Landing *content.Landing `json:"landing,omitempty"`

	Labels *TargetLabels `json:"labels,omitempty"` // the reader's words for the target (views only)
	// SearchPreview is the page's search result with the proposed values,
	// on a call that changes a page's title or description (views only).
	SearchPreview *serp.Preview `json:"searchPreview,omitempty"`
}

// offers reports whether the card offers answer a.
func (c *Card) offers(a string) bool {
	for _, x := range c.Answers {
		if x == a {
			return true
		}
	}
	return false
}

// ofKind reports whether approving answer a (apply or approve) is of the
// card's kind: apply on a process card (it offers skip), approve on every
// other card — whether or not a preview error took it off the card.
func (c *Card) ofKind(a string) bool {
	return (a == AnswerApply) == c.offers(AnswerSkip)
}

// Question is the question a conversation waits for (awaiting_input): the
// paused turn's digest, the question, its options and whether it takes an
// answer in the editor's own words.
type Question struct {
	TurnDigest string   `json:"turnDigest"`
	Question   string   `json:"question"`
	Options    []string `json:"options"`
	FreeText   bool     `json:"freeText"`
	// Schema is the answer's JSON Schema, as the runtime checks it.
	Schema json.RawMessage `json:"-"`
}

// storedQuestion is a Question as the card column stores it.
type storedQuestion struct {
	Question
	Schema json.RawMessage `json:"schema"`
}

// row is a stored conversation.
type row struct {
	ID             int64
	Owner          int64
	Configuration  int64
	Page, Language int64
	Skill          int64
	Process        bool
	Status         Status
	LastRun        string
	PendingRun     string
	Card           *Card     // while awaiting approval
	Question       *Question // while awaiting input
	// Decided is the card whose answer the conversation is carrying out
	// while processing a decision (kept from the claim, change.keepCard):
	// whoever finds the decision's job gone settles the card from the run
	// (settleDecided), not only the job that took it.
	Decided *Card
	// Answered is, likewise, the question whose answer the conversation is
	// carrying out while processing it: whoever finds the answer's job lost
	// before it reached the run hands the job back (rescueDecision), not the
	// question to the editor again.
	Answered *Question
	card     string // the card column as stored: what a claim compares
	// Follows: the pending run was decided elsewhere and still runs; the
	// conversation is processing without a turn of its own and takes the
	// run's state once it pauses or ends (reconcile).
	Follows bool
	// EndingTour: the conversation is processing on an end-tour's claim
	// (the error column holds endingTour) — no turn, job or run of its own;
	// a recovery carries the end out (finishEndTour). Error is then empty.
	EndingTour bool
	Progress   json.RawMessage
	Highlight  json.RawMessage
	Error      string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Message is one entry of the transcript.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	Notice  string `json:"notice,omitempty"`
}

// Outcome is what became of one decided card, read from the run's steps.
type Outcome struct {
	Outcome string   `json:"outcome"`
	After   int64    `json:"after"` // the message count when it was decided
	Table   string   `json:"table"`
	UID     int64    `json:"uid"`
	Fields  []string `json:"fields"`
	Run     string   `json:"-"`

	Labels *TargetLabels `json:"labels,omitempty"` // the reader's words for table, record and fields
}

// ErrNotFound answers an unknown conversation and one of another user alike.
var ErrNotFound = fault.New(fault.NotFound, "not_found", "not found")

const convColumns = `id, owner_uid, configuration_uid, page_uid, language, skill_uid, process, status, last_run_uuid,
	pending_run_uuid, card, progress, highlight, error, follows_run, created_at, updated_at`

// setDecision sets the decision r waits for from the card column as stored
// (raw): a question while awaiting input, else a card of the pending run.
func (r *row) setDecision(raw string) error {
	r.card, r.Card, r.Question, r.Decided, r.Answered = raw, nil, nil, nil, nil
	switch {
	case raw == "":
	case r.Status == AwaitingInput || r.Status == Processing && isQuestion(raw):
		var q storedQuestion
		if err := json.Unmarshal([]byte(raw), &q); err != nil {
			return fmt.Errorf("question of conversation %d: %w", r.ID, err)
		}
		q.Question.Schema = q.Schema
		if r.Status == Processing {
			r.Answered = &q.Question // an answered question, kept while its answer is carried out
		} else {
			r.Question = &q.Question
		}
	default:
		var c Card
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			return fmt.Errorf("card of conversation %d: %w", r.ID, err)
		}
		c.RunUUID = r.PendingRun
		if r.Status == Processing {
			r.Decided = &c // a decided card, kept while its decision is carried out
		} else {
			r.Card = &c
		}
	}
	return nil
}

// isQuestion reports whether the card column as stored (raw) holds a
// question: a question has the key "question", a card never has.
func isQuestion(raw string) bool {
	var probe struct {
		Question *string `json:"question"`
	}
	return json.Unmarshal([]byte(raw), &probe) == nil && probe.Question != nil
}

func scanRow(sc interface{ Scan(...any) error }) (row, error) {
	var r row
	var status, card, progress, highlight string
	var created, updated int64
	if err := sc.Scan(&r.ID, &r.Owner, &r.Configuration, &r.Page, &r.Language, &r.Skill, &r.Process, &status, &r.LastRun,
		&r.PendingRun, &card, &progress, &highlight, &r.Error, &r.Follows, &created, &updated); err != nil {
		return row{}, err
	}
	r.Status = Status(status)
	if r.Status == Processing && r.Error == endingTour {
		r.EndingTour, r.Error = true, ""
	}
	if err := r.setDecision(card); err != nil {
		return row{}, err
	}
	if progress != "" {
		r.Progress = json.RawMessage(progress)
	}
	if highlight != "" {
		r.Highlight = json.RawMessage(highlight)
	}
	r.CreatedAt, r.UpdatedAt = store.Time(created), store.Time(updated)
	return r, nil
}

func getRow(ctx context.Context, q store.Querier, id int64) (row, error) {
	r, err := scanRow(q.QueryRow(ctx, "SELECT "+convColumns+" FROM conversations WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return row{}, ErrNotFound
	}
	return r, err
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

func addMessageTx(ctx context.Context, q store.Querier, id int64, m Message, now int64) error {
	_, err := q.Exec(ctx, `INSERT INTO conversation_messages (conversation_id, role, content, notice, created_at) VALUES (?, ?, ?, ?, ?)`,
		id, m.Role, m.Content, m.Notice, now)
	return err
}

func messages(ctx context.Context, q store.Querier, id int64) ([]Message, error) {
	return store.Collect(ctx, q, func(sc store.Scanner) (Message, error) {
		var m Message
		err := sc.Scan(&m.Role, &m.Content, &m.Notice)
		return m, err
	}, `SELECT role, content, notice FROM conversation_messages WHERE conversation_id = ? ORDER BY id`, id)
}

// messageCount is how many messages conversation id has.
func messageCount(ctx context.Context, q store.Querier, id int64) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, "SELECT COUNT(*) FROM conversation_messages WHERE conversation_id = ?", id).Scan(&n)
	return n, err
}

// addOutcomeTx records a decided card's outcome and reports whether it did:
// a card is settled once (the run and the messages it came after key it,
// migration 00016), and an outcome of the same card stored already leaves
// this one out.
func addOutcomeTx(ctx context.Context, q store.Querier, id int64, o Outcome, now int64) (bool, error) {
	fields, _ := json.Marshal(o.Fields)
	res, err := q.Exec(ctx, `INSERT INTO conversation_outcomes (conversation_id, run_uuid, outcome, after_message, tbl, uid, fields, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (conversation_id, run_uuid, after_message) DO NOTHING`,
		id, o.Run, o.Outcome, o.After, o.Table, o.UID, string(fields), now)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func outcomes(ctx context.Context, q store.Querier, id int64) ([]Outcome, error) {
	return store.Collect(ctx, q, func(sc store.Scanner) (Outcome, error) {
		var o Outcome
		var fields string
		if err := sc.Scan(&o.Run, &o.Outcome, &o.After, &o.Table, &o.UID, &fields); err != nil {
			return o, err
		}
		_ = json.Unmarshal([]byte(fields), &o.Fields)
		if o.Fields == nil {
			o.Fields = []string{}
		}
		return o, nil
	}, `SELECT run_uuid, outcome, after_message, tbl, uid, fields FROM conversation_outcomes
		WHERE conversation_id = ? ORDER BY id`, id)
}
