package run

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"waymark/internal/store"
)

// SQL lists of statuses for the WHERE clauses of the guarded transitions.
const (
	nonTerminalSQL = `('queued', 'running', 'waiting_for_approval', 'waiting_for_input')`
	waitingSQL     = `('waiting_for_approval', 'waiting_for_input')`
)

// Flush is what a segment commits with a guarded transition: its buffered
// events and the usage it has not added yet. The transition's own UPDATE
// advances the event sequence and adds the usage (its trigger writes the
// usage row of the costs), so a flush costs one INSERT of the events more,
// made only when the transition won.
type Flush struct {
	Events  []NewEvent
	Usage   Usage
	Privacy Privacy
}

// update is one guarded transition of a run (a params
// struct instead of four adjacent positional arguments): op names it in
// errors, set and where are SQL fragments, args the arguments of set and then
// of where.
type update struct {
	op, set, where string
	args           []any
}

// guarded runs one conditional UPDATE of a run, "UPDATE runs SET set WHERE
// uuid = ? AND where" (args: those of set, then those of where, without the
// uuid), and reports whether it changed the row. A uuid that names no run
// loses like any other guard. With a flush, the same UPDATE advances the
// event sequence and adds the usage, and the events are inserted once it won.
func (s *Store) guarded(ctx context.Context, q store.Querier, id string, u update, f Flush) (bool, error) {
	op, set, where, args := u.op, u.set, u.where, u.args
	if f.Usage.PromptTokens < 0 || f.Usage.CompletionTokens < 0 || f.Usage.Iterations < 0 {
		return false, invalid(op, id, "usage %+v is negative", f.Usage)
	}
	if db, ok := q.(*store.DB); ok && len(f.Events) > 0 {
		// The UPDATE … RETURNING and the events' INSERT are one
		// transaction, under the store's write lock on SQLite.
		var won bool
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			won, err = s.guarded(ctx, tx, id, u, f)
			return err
		})
		return won, err
	}
	bodies, err := encodeAll(id, f.Events, f.Privacy)
	if err != nil {
		return false, err
	}
	n := strings.Count(set, "?")
	all := make([]any, 0, len(args)+5)
	all = append(all, args[:n]...)
	if f.Usage != (Usage{}) {
		set += ", prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?, iterations = iterations + ?"
		all = append(all, f.Usage.PromptTokens, f.Usage.CompletionTokens, f.Usage.Iterations)
		if f.Usage.PromptTokens > 0 || f.Usage.CompletionTokens > 0 {
			// The trigger of migration 00025 writes the usage row (the
			// costs) from the tokens this UPDATE adds, dated usage_at: in
			// the same statement, and only when it wins.
			set += ", usage_at = ?"
			all = append(all, store.Micros(s.clk.Now()))
		}
	}
	if len(bodies) > 0 {
		set += ", event_sequence = event_sequence + ?"
		all = append(all, len(bodies))
	}
	all = append(all, id)
	all = append(all, args[n:]...)
	query := "UPDATE runs SET " + set + " WHERE uuid = ? AND " + where
	if len(bodies) == 0 {
		res, err := q.Exec(ctx, query, all...)
		if err != nil {
			return false, fmt.Errorf("%s run %s: %w", op, id, err)
		}
		won, err := res.RowsAffected()
		if err != nil {
			return false, fmt.Errorf("%s run %s: %w", op, id, err)
		}
		return won == 1, nil
	}
	if q.Dialect() == store.Postgres {
		return s.guardedWithEvents(ctx, q, id, op, query, all, f, bodies)
	}
	var last int64
	err = q.QueryRow(ctx, query+" RETURNING event_sequence", all...).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s run %s: %w", op, id, err)
	}
	if err := s.insertEvents(ctx, q, id, last, f.Events, bodies); err != nil {
		return false, err
	}
	return true, nil
}

// guardedWithEvents runs the guarded UPDATE query (with its arguments all)
// and the INSERT of its events as one PostgreSQL statement: the UPDATE in a
// data-modifying WITH, the events inserted from its returned sequence, so
// they are inserted only when it won (one round trip instead of two). The
// events' sequences are those insertEvents gives them. A priced flush's
// usage row is written by the UPDATE's trigger (migration 00025).
func (s *Store) guardedWithEvents(ctx context.Context, q store.Querier, id, op, query string, all []any, f Flush, bodies [][]byte) (bool, error) {
	evs := f.Events
	var b strings.Builder
	b.WriteString("WITH won AS (" + query + " RETURNING event_sequence) ")
	b.WriteString("INSERT INTO run_events (run_uuid, sequence, kind, payload, created_at) ")
	fmt.Fprintf(&b, "SELECT CAST(? AS TEXT), won.event_sequence - %d + e.k, e.kind, e.payload, CAST(? AS BIGINT) FROM won, (VALUES ", len(evs))
	all = append(all, id, store.Micros(s.clk.Now()))
	for i, e := range evs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, CAST(? AS TEXT), CAST(? AS TEXT))", i+1)
		all = append(all, string(e.Kind), string(bodies[i]))
	}
	b.WriteString(") AS e (k, kind, payload)")
	res, err := q.Exec(ctx, b.String(), all...)
	if err != nil {
		return false, fmt.Errorf("%s run %s: %w", op, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("%s run %s: %w", op, id, err)
	}
	return n == int64(len(evs)), nil
}

func invalid(op, id, format string, args ...any) error {
	return fmt.Errorf("%w: %s run %s: %s", ErrInvalid, op, id, fmt.Sprintf(format, args...))
}

func checkLease(op, id, owner string, lease time.Duration) error {
	if owner == "" {
		return invalid(op, id, "lease owner is empty")
	}
	if lease <= 0 {
		return invalid(op, id, "lease %v is not positive", lease)
	}
	return nil
}

// Claim takes a queued run: queued → running with owner's lease of the given
// length. It wins once; a duplicate or stale pickup loses.
func (s *Store) Claim(ctx context.Context, id, owner string, lease time.Duration) (bool, error) {
	if err := checkLease("claim", id, owner, lease); err != nil {
		return false, err
	}
	now := s.clk.Now()
	return s.guarded(ctx, s.db, id, update{op: "claim", set: `status = 'running', lease_owner = ?, lease_expires_at = ?, updated_at = ?`,
		where: `status = 'queued'`, args: []any{owner, store.Micros(now.Add(lease)), store.Micros(now)}}, Flush{})
}

// Renewal is how Renew extends a lease (a transition's
// arguments by name).
type Renewal struct {
	Owner string        // the segment that holds the run
	Lease time.Duration // the new lease, from now
	// Fence: nil leaves the write fence as it is, NoFence clears it, any
	// other value sets it (SetFence); all in the same UPDATE.
	Fence []byte
}

// Renew extends r.Owner's lease of a running run to now+r.Lease (and sets
// or clears the fence as r.Fence says). It loses when the run is no longer
// running or another owner holds it: the segment must then stop without
// settling.
func (s *Store) Renew(ctx context.Context, id string, r Renewal) (bool, error) {
	return s.RenewTx(ctx, nil, id, r, Flush{})
}

// NoFence, as the Fence of a Renewal, clears the write fence.
var NoFence = []byte{}

// RenewTx is Renew inside tx (nil: on its own), committing f with it.
func (s *Store) RenewTx(ctx context.Context, tx *store.Tx, id string, r Renewal, f Flush) (bool, error) {
	if err := checkLease("renew", id, r.Owner, r.Lease); err != nil {
		return false, err
	}
	now := s.clk.Now()
	set, args := `lease_expires_at = ?, updated_at = ?`, []any{store.Micros(now.Add(r.Lease)), store.Micros(now)}
	if r.Fence != nil {
		if len(r.Fence) > 0 && !json.Valid(r.Fence) {
			return false, invalid("renew", id, "fence is not JSON")
		}
		set += ", pending_effect = ?"
		args = append(args, string(r.Fence))
	}
	return s.guarded(ctx, s.querier(tx), id, update{op: "renew", set: set,
		where: `status = 'running' AND lease_owner = ?`, args: append(args, r.Owner)}, f)
}

// Suspension is how Suspend parks a run.
type Suspension struct {
	Owner string // the segment that holds the run
	To    Status // waiting_for_approval or waiting_for_input
	State []byte // the suspended state (JSON)
}

// Suspend parks the running run that sp.Owner holds in a waiting status
// (sp.To) with its suspended state, and releases the lease. It requires
// status running, so a run cancelled in the meantime is never revived: the
// cancel wins. Suspend also serves the "release" after a refused decision (a
// resumed run goes back to waiting).
func (s *Store) Suspend(ctx context.Context, id string, sp Suspension) (bool, error) {
	return s.SuspendTx(ctx, nil, id, sp, Flush{})
}

// SuspendTx is Suspend inside tx (nil: on its own), committing f with it.
func (s *Store) SuspendTx(ctx context.Context, tx *store.Tx, id string, sp Suspension, f Flush) (bool, error) {
	switch {
	case sp.Owner == "":
		return false, invalid("suspend", id, "lease owner is empty")
	case !sp.To.Waiting():
		return false, invalid("suspend", id, "status %q is not a waiting status", sp.To)
	case len(sp.State) == 0 || !json.Valid(sp.State):
		return false, invalid("suspend", id, "suspended state is not JSON")
	}
	return s.guarded(ctx, s.querier(tx), id, update{op: "suspend", set: `status = ?, suspended = ?, lease_owner = '', lease_expires_at = 0, updated_at = ?`,
		where: `status = 'running' AND lease_owner = ?`, args: []any{string(sp.To), string(sp.State), store.Micros(s.clk.Now()), sp.Owner}}, f)
}

// Resumption is how Resume claims a waiting run.
type Resumption struct {
	From  Status        // the waiting status the decision answers
	Owner string        // the segment that executes the decision
	Lease time.Duration // the owner's lease
	Fence []byte        // ResumeTx: set as the write fence in the same UPDATE when non-nil
}

// Resume claims a waiting run for the segment that executes a decision:
// From (the waiting status the decision answers) → running with Owner's
// lease. The suspended state is kept until the run suspends again (it is
// overwritten) or ends (Settle and Cancel clear it), so the resumer reads it
// after winning the claim. Resume sets no fence.
func (s *Store) Resume(ctx context.Context, id string, r Resumption) (bool, error) {
	r.Fence = nil
	return s.ResumeTx(ctx, nil, id, r, Flush{})
}

// ResumeTx is Resume inside tx (nil: on its own), committing f with it; a
// non-nil Fence is set as the write fence in the same UPDATE (SetFence).
func (s *Store) ResumeTx(ctx context.Context, tx *store.Tx, id string, r Resumption, f Flush) (bool, error) {
	if !r.From.Waiting() {
		return false, invalid("resume", id, "status %q is not a waiting status", r.From)
	}
	if err := checkLease("resume", id, r.Owner, r.Lease); err != nil {
		return false, err
	}
	now := s.clk.Now()
	set, args := `status = 'running', lease_owner = ?, lease_expires_at = ?, updated_at = ?`, []any{r.Owner, store.Micros(now.Add(r.Lease)), store.Micros(now)}
	if r.Fence != nil {
		if !json.Valid(r.Fence) {
			return false, invalid("resume", id, "fence is not JSON")
		}
		set += ", pending_effect = ?"
		args = append(args, string(r.Fence))
	}
	return s.guarded(ctx, s.querier(tx), id, update{op: "resume", set: set, where: `status = ?`, args: append(args, string(r.From))}, f)
}

// querier is tx, or the pool when tx is nil.
func (s *Store) querier(tx *store.Tx) store.Querier {
	if tx == nil {
		return s.db
	}
	return tx
}
