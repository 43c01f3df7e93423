package run

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"waymark/internal/store"
)

// SQL lists of statuses for the WHERE clauses of the guarded transitions.
const (
	nonTerminalSQL = `('queued', 'running', 'waiting_for_approval', 'waiting_for_input')`
	waitingSQL     = `('waiting_for_approval', 'waiting_for_input')`
)

// guarded runs one conditional UPDATE and reports whether it changed the row.
// A uuid that names no run loses like any other guard.
func guarded(ctx context.Context, q store.Querier, op, id string, query string, args ...any) (bool, error) {
	res, err := q.Exec(ctx, query, args...)
	if err != nil {
		return false, fmt.Errorf("%s run %s: %w", op, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("%s run %s: %w", op, id, err)
	}
	return n == 1, nil
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
	return s.claim(ctx, s.db, id, owner, lease)
}

// ClaimTx is Claim inside tx.
func (s *Store) ClaimTx(ctx context.Context, tx *store.Tx, id, owner string, lease time.Duration) (bool, error) {
	return s.claim(ctx, tx, id, owner, lease)
}

func (s *Store) claim(ctx context.Context, q store.Querier, id, owner string, lease time.Duration) (bool, error) {
	if err := checkLease("claim", id, owner, lease); err != nil {
		return false, err
	}
	now := s.clk.Now()
	return guarded(ctx, q, "claim", id, `UPDATE runs SET status = 'running', lease_owner = ?,
		lease_expires_at = ?, updated_at = ? WHERE uuid = ? AND status = 'queued'`,
		owner, store.Micros(now.Add(lease)), store.Micros(now), id)
}

// Renew extends owner's lease of a running run to now+lease. It loses when
// the run is no longer running or another owner holds it: the segment must
// then stop without settling.
func (s *Store) Renew(ctx context.Context, id, owner string, lease time.Duration) (bool, error) {
	return s.renew(ctx, s.db, id, owner, lease)
}

// RenewTx is Renew inside tx.
func (s *Store) RenewTx(ctx context.Context, tx *store.Tx, id, owner string, lease time.Duration) (bool, error) {
	return s.renew(ctx, tx, id, owner, lease)
}

func (s *Store) renew(ctx context.Context, q store.Querier, id, owner string, lease time.Duration) (bool, error) {
	if err := checkLease("renew", id, owner, lease); err != nil {
		return false, err
	}
	now := s.clk.Now()
	return guarded(ctx, q, "renew", id, `UPDATE runs SET lease_expires_at = ?, updated_at = ?
		WHERE uuid = ? AND status = 'running' AND lease_owner = ?`,
		store.Micros(now.Add(lease)), store.Micros(now), id, owner)
}

// Suspend parks owner's running run in a waiting status (to is
// waiting_for_approval or waiting_for_input) with its suspended state, and
// releases the lease. It requires status running, so a run cancelled in the
// meantime is never revived: the cancel wins. Suspend also serves the
// "release" after a refused decision (a resumed run goes back to waiting).
func (s *Store) Suspend(ctx context.Context, id, owner string, to Status, suspended []byte) (bool, error) {
	return s.suspend(ctx, s.db, id, owner, to, suspended)
}

// SuspendTx is Suspend inside tx.
func (s *Store) SuspendTx(ctx context.Context, tx *store.Tx, id, owner string, to Status, suspended []byte) (bool, error) {
	return s.suspend(ctx, tx, id, owner, to, suspended)
}

func (s *Store) suspend(ctx context.Context, q store.Querier, id, owner string, to Status, suspended []byte) (bool, error) {
	switch {
	case owner == "":
		return false, invalid("suspend", id, "lease owner is empty")
	case !to.Waiting():
		return false, invalid("suspend", id, "status %q is not a waiting status", to)
	case len(suspended) == 0 || !json.Valid(suspended):
		return false, invalid("suspend", id, "suspended state is not JSON")
	}
	return guarded(ctx, q, "suspend", id, `UPDATE runs SET status = ?, suspended = ?, lease_owner = '',
		lease_expires_at = 0, updated_at = ? WHERE uuid = ? AND status = 'running' AND lease_owner = ?`,
		string(to), string(suspended), store.Micros(s.clk.Now()), id, owner)
}

// Resume claims a waiting run for the segment that executes a decision:
// from (the waiting status the decision answers) → running with owner's
// lease. The suspended state is kept until the run suspends again (it is
// overwritten) or ends (Settle and Cancel clear it), so the resumer reads it
// after winning the claim.
func (s *Store) Resume(ctx context.Context, id string, from Status, owner string, lease time.Duration) (bool, error) {
	return s.resume(ctx, s.db, id, from, owner, lease)
}

// ResumeTx is Resume inside tx.
func (s *Store) ResumeTx(ctx context.Context, tx *store.Tx, id string, from Status, owner string, lease time.Duration) (bool, error) {
	return s.resume(ctx, tx, id, from, owner, lease)
}

func (s *Store) resume(ctx context.Context, q store.Querier, id string, from Status, owner string, lease time.Duration) (bool, error) {
	if !from.Waiting() {
		return false, invalid("resume", id, "status %q is not a waiting status", from)
	}
	if err := checkLease("resume", id, owner, lease); err != nil {
		return false, err
	}
	now := s.clk.Now()
	return guarded(ctx, q, "resume", id, `UPDATE runs SET status = 'running', lease_owner = ?,
		lease_expires_at = ?, updated_at = ? WHERE uuid = ? AND status = ?`,
		owner, store.Micros(now.Add(lease)), store.Micros(now), id, string(from))
}
