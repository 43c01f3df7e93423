package run

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"waymark/internal/clock"
	"waymark/internal/store"
)

// ErrNotFound is returned by Get and AppendEvent when no run has the uuid.
// Guarded transitions do not return it: a missing run loses like any other
// guard.
var ErrNotFound = errors.New("run not found")

// ErrInvalid is wrapped by every error about bad input (an unknown status, a
// missing owner, a non-terminal settle status). Such a call changes nothing.
var ErrInvalid = errors.New("invalid run input")

// Usage is what a run has consumed so far.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
	Iterations       int
}

// Run is one stored run row.
type Run struct {
	UUID          string
	Configuration int64
	Initiator     int64 // backend user uid
	Status        Status
	Reason        Reason // "" until the run ends
	ErrorClass    string
	ErrorMessage  string
	Usage         Usage
	// LeaseOwner and LeaseExpiresAt name the segment executing the run;
	// "" and the zero time when no one holds it (queued, waiting, terminal).
	LeaseOwner     string
	LeaseExpiresAt time.Time
	RequeueCount   int
	// PendingEffect is the write fence: JSON naming the tool call about to
	// write, nil when none.
	PendingEffect json.RawMessage
	// Request is the stored request JSON of a queued run, nil when none.
	Request json.RawMessage
	// Suspended is the suspended state JSON while waiting, nil when none.
	Suspended json.RawMessage
	// AllowedTools is the requested tool allow-list; nil means "no list".
	AllowedTools []string
	// Answer is the final answer as stored (see StoredAnswer).
	Answer     string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt time.Time // zero until terminal
	// Events are the events read with the run by GetWithEvents, oldest
	// first; nil when the run was read without them.
	Events []Event
}

// Store reads and writes runs and their events. It is safe for concurrent use.
type Store struct {
	db  *store.DB
	clk clock.Clock
}

// NewStore returns a Store on db; clk supplies every time it stores or compares.
func NewStore(db *store.DB, clk clock.Clock) *Store {
	return &Store{db: db, clk: clk}
}

// Create stores a new run. Its status must be queued (with a stored
// Request) or running (born claimed: LeaseOwner set and LeaseExpiresAt in
// the future). CreatedAt and UpdatedAt come from the clock; Reason, errors,
// FinishedAt and RequeueCount must be unset.
func (s *Store) Create(ctx context.Context, r Run) error { return s.create(ctx, s.db, r, Flush{}) }

// CreateTx is Create inside tx, so the row commits with its queue job, and
// with its first events (f.Events; f.Usage must be empty: r carries usage).
func (s *Store) CreateTx(ctx context.Context, tx *store.Tx, r Run, f Flush) error {
	_, err := s.insert(ctx, tx, r, f, 0)
	return err
}

// CreateCappedTx is CreateTx for a run whose initiator may have at most
// maxOpen open runs (OpenStatuses; maxOpen > 0): the insert counts them in
// its own statement and stores nothing — no row, no event — when there are
// maxOpen or more, answering false. The caller serialises the initiator's
// new runs (a lock held by tx), so two cannot both count the last place.
func (s *Store) CreateCappedTx(ctx context.Context, tx *store.Tx, r Run, f Flush, maxOpen int) (bool, error) {
	if maxOpen <= 0 {
		return false, invalid("create", r.UUID, "the cap of open runs must be positive")
	}
	return s.insert(ctx, tx, r, f, maxOpen)
}

func (s *Store) create(ctx context.Context, q store.Querier, r Run, f Flush) error {
	_, err := s.insert(ctx, q, r, f, 0)
	return err
}

// insert stores r and f's events; with maxOpen > 0, only while r's
// initiator has fewer open runs (reported by the bool).
func (s *Store) insert(ctx context.Context, q store.Querier, r Run, f Flush, maxOpen int) (bool, error) {
	now := s.clk.Now()
	if err := validateNew(r, now); err != nil {
		return false, err
	}
	if f.Usage != (Usage{}) {
		return false, invalid("create", r.UUID, "usage belongs on the run, not the flush")
	}
	bodies, err := encodeAll(r.UUID, f.Events, f.Privacy)
	if err != nil {
		return false, err
	}
	allowed, err := json.Marshal(r.AllowedTools)
	if err != nil {
		return false, fmt.Errorf("create run %s: allowed tools: %w", r.UUID, err)
	}
	const columns = `INSERT INTO runs (uuid, configuration, initiator, status, prompt_tokens,
		completion_tokens, iterations, lease_owner, lease_expires_at, pending_effect, request,
		suspended, allowed_tools, answer, event_sequence, created_at, updated_at)`
	args := []any{r.UUID, r.Configuration, r.Initiator, string(r.Status), r.Usage.PromptTokens,
		r.Usage.CompletionTokens, r.Usage.Iterations, r.LeaseOwner, store.Micros(r.LeaseExpiresAt),
		string(r.PendingEffect), string(r.Request), string(r.Suspended), string(allowed), r.Answer,
		int64(len(bodies)), store.Micros(now), store.Micros(now)}
	stmt := columns + ` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	if maxOpen > 0 {
		// The cap is counted by the insert itself: one statement, not a
		// count and an insert.
		open := OpenStatuses()
		stmt = columns + ` SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
		WHERE (SELECT COUNT(*) FROM runs WHERE initiator = ? AND status IN (?, ?, ?)) < ?`
		args = append(args, r.Initiator, string(open[0]), string(open[1]), string(open[2]), maxOpen)
	}
	res, err := q.Exec(ctx, stmt, args...)
	if err != nil {
		return false, fmt.Errorf("create run %s: %w", r.UUID, err)
	}
	if maxOpen > 0 {
		n, err := res.RowsAffected()
		if err != nil {
			return false, fmt.Errorf("create run %s: %w", r.UUID, err)
		}
		if n == 0 {
			return false, nil
		}
	}
	if len(bodies) > 0 {
		if err := s.insertEvents(ctx, q, r.UUID, int64(len(bodies)), f.Events, bodies); err != nil {
			return false, err
		}
	}
	return true, nil
}

func validateNew(r Run, now time.Time) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: create run %q: %s", ErrInvalid, r.UUID, fmt.Sprintf(format, args...))
	}
	if _, err := uuid.Parse(r.UUID); err != nil {
		return bad("uuid is not a UUID")
	}
	switch r.Status {
	case StatusQueued:
		if len(r.Request) == 0 {
			return bad("a queued run needs its stored request")
		}
		if r.LeaseOwner != "" || !r.LeaseExpiresAt.IsZero() {
			return bad("a queued run holds no lease")
		}
	case StatusRunning:
		if r.LeaseOwner == "" || !r.LeaseExpiresAt.After(now) {
			return bad("a running run needs a lease owner and a lease expiry in the future")
		}
	default:
		return bad("status %q: a new run is queued or running", r.Status)
	}
	if r.Reason != "" || r.ErrorClass != "" || r.ErrorMessage != "" || !r.FinishedAt.IsZero() || r.RequeueCount != 0 {
		return bad("reason, errors, finish time and requeue count are set by transitions")
	}
	for name, js := range map[string]json.RawMessage{"pending effect": r.PendingEffect, "request": r.Request, "suspended state": r.Suspended} {
		if len(js) > 0 && !json.Valid(js) {
			return bad("%s is not JSON", name)
		}
	}
	return nil
}

const runColumns = `uuid, configuration, initiator, status, termination_reason, error_class,
	error_message, prompt_tokens, completion_tokens, iterations, lease_owner, lease_expires_at,
	requeue_count, pending_effect, request, suspended, allowed_tools, answer, created_at,
	updated_at, finished_at`

// Get returns the run with the uuid, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Run, error) {
	r, err := scanRun(s.db.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE uuid = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("run %s: %w", id, err)
	}
	return r, nil
}

type scanner = store.Scanner

func scanRun(sc scanner) (Run, error) {
	var (
		r                                  Run
		status, reason                     string
		leaseExp, created, updated, finish int64
		effect, request, suspended, tools  string
	)
	err := sc.Scan(&r.UUID, &r.Configuration, &r.Initiator, &status, &reason, &r.ErrorClass,
		&r.ErrorMessage, &r.Usage.PromptTokens, &r.Usage.CompletionTokens, &r.Usage.Iterations,
		&r.LeaseOwner, &leaseExp, &r.RequeueCount, &effect, &request, &suspended, &tools,
		&r.Answer, &created, &updated, &finish)
	if err != nil {
		return Run{}, err
	}
	r.Status, r.Reason = Status(status), Reason(reason)
	r.LeaseExpiresAt, r.CreatedAt, r.UpdatedAt, r.FinishedAt = store.Time(leaseExp), store.Time(created), store.Time(updated), store.Time(finish)
	r.PendingEffect, r.Request, r.Suspended = rawOrNil(effect), rawOrNil(request), rawOrNil(suspended)
	if err := json.Unmarshal([]byte(tools), &r.AllowedTools); err != nil {
		return Run{}, fmt.Errorf("allowed tools of %s: %w", r.UUID, err)
	}
	return r, nil
}

func rawOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}
