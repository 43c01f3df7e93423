package chat

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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

// owned loads a conversation of the actor; others answer like unknown ones.
func owned(ctx context.Context, q store.Querier, actor, id int64) (row, error) {
	r, err := getRow(ctx, q, id)
	if err != nil {
		return row{}, err
	}
	if r.Owner != actor {
		return row{}, ErrNotFound
	}
	return r, nil
}
