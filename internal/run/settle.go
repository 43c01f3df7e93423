package run

import (
	"context"
	"time"

	"waymark/internal/store"
)

// Settlement is how a settle ends a run.
type Settlement struct {
	// Owner is the lease owner the settle is guarded on: "" settles only a
	// run no one holds (queued or waiting); SettleExpired needs one.
	Owner    string
	Status   Status // terminal (SettleExpired: always failed)
	Reason   Reason // the termination reason
	ErrClass string // the error class, "" for none
	ErrMsg   string // the error message, "" for none
	Answer   string // the stored answer: pass it through StoredAnswer (SettleExpired: none)
}

// Settle ends a run: a non-terminal run held by to.Owner → the settlement's
// status (terminal) with its reason, error class and message and stored
// answer. Owner "" settles only a run no one holds (queued or waiting), as
// for a refusal of a run not yet claimed. Settle stamps finished_at,
// releases the lease and clears the stored request and the suspended state;
// the write fence is left as it is, for the audit. A late second settle
// loses.
func (s *Store) Settle(ctx context.Context, id string, to Settlement) (bool, error) {
	return s.settle(ctx, s.db, id, to, false, Flush{})
}

// SettleTx is Settle inside tx, committing f (its status event) with it.
func (s *Store) SettleTx(ctx context.Context, tx *store.Tx, id string, to Settlement, f Flush) (bool, error) {
	return s.settle(ctx, tx, id, to, false, f)
}

// SettleExpired dead-letters a running run whose lease, held by to.Owner, has
// expired by the clock: → failed with the settlement's reason, error class
// and message (its status and answer are not used). The expiry is
// re-checked in the UPDATE, so a concurrent Renew wins over the reaper.
func (s *Store) SettleExpired(ctx context.Context, id string, to Settlement) (bool, error) {
	return s.settleExpired(ctx, s.db, id, to)
}

// SettleExpiredTx is SettleExpired inside tx.
func (s *Store) SettleExpiredTx(ctx context.Context, tx *store.Tx, id string, to Settlement) (bool, error) {
	return s.settleExpired(ctx, tx, id, to)
}

func (s *Store) settleExpired(ctx context.Context, q store.Querier, id string, to Settlement) (bool, error) {
	to.Status, to.Answer = StatusFailed, ""
	return s.settle(ctx, q, id, to, true, Flush{})
}

func (s *Store) settle(ctx context.Context, q store.Querier, id string, to Settlement, expired bool, f Flush) (bool, error) {
	owner := to.Owner
	switch {
	case !to.Status.Terminal():
		return false, invalid("settle", id, "status %q is not terminal", to.Status)
	case !to.Reason.Valid():
		return false, invalid("settle", id, "unknown termination reason %q", to.Reason)
	case expired && owner == "":
		return false, invalid("settle", id, "lease owner is empty")
	}
	now := store.Micros(s.clk.Now())
	where := `status IN ` + nonTerminalSQL + ` AND lease_owner = ?`
	args := []any{string(to.Status), string(to.Reason), to.ErrClass, to.ErrMsg, to.Answer, now, now, owner}
	if expired {
		where += ` AND status = 'running' AND lease_expires_at > 0 AND lease_expires_at < ?`
		args = append(args, now)
	}
	return s.guarded(ctx, q, id, update{op: "settle", set: `status = ?, termination_reason = ?, error_class = ?, error_message = ?,
		answer = ?, lease_owner = '', lease_expires_at = 0, request = '', suspended = '',
		finished_at = ?, updated_at = ?`, where: where, args: args}, f)
}

// Cancel ends any non-terminal run (queued, running or waiting) as
// cancelled/cancelled, releases the lease and clears the stored request and
// the suspended state. A running segment notices at its next step boundary
// (its Renew, Suspend and Settle lose). A terminal run is left alone.
func (s *Store) Cancel(ctx context.Context, id string) (bool, error) {
	return s.cancel(ctx, s.db, id, nonTerminalSQL)
}

// CancelTx is Cancel inside tx.
func (s *Store) CancelTx(ctx context.Context, tx *store.Tx, id string) (bool, error) {
	return s.cancel(ctx, tx, id, nonTerminalSQL)
}

// CancelIfWaiting cancels a run only while it waits for approval or input;
// a queued or running run (someone just released it) and a terminal run are
// left alone and the call loses.
func (s *Store) CancelIfWaiting(ctx context.Context, id string) (bool, error) {
	return s.cancel(ctx, s.db, id, waitingSQL)
}

// CancelIfWaitingTx is CancelIfWaiting inside tx.
func (s *Store) CancelIfWaitingTx(ctx context.Context, tx *store.Tx, id string) (bool, error) {
	return s.cancel(ctx, tx, id, waitingSQL)
}

func (s *Store) cancel(ctx context.Context, q store.Querier, id, from string) (bool, error) {
	now := store.Micros(s.clk.Now())
	won, err := s.guarded(ctx, q, id, update{op: "cancel", set: `status = 'cancelled', termination_reason = 'cancelled',
		lease_owner = '', lease_expires_at = 0, request = '', suspended = '', finished_at = ?, updated_at = ?`, where: `status IN ` + from, args: []any{now, now}}, Flush{})
	if err != nil || !won {
		return won, err
	}
	return true, store.SignalAfter(ctx, q, CancelledKey(id))
}

// CancelledKey is the store signal (store.SignalAfter) a won cancel of run
// id sends at its commit: the segment that holds the run's lease watches it
// and ends its model or tool call at once instead of at its next renewal —
// on PostgreSQL also when another process cancelled the run.
func CancelledKey(id string) string { return "run-cancelled:" + id }

// ExpiredLeases returns the running runs whose lease expired before now,
// oldest expiry first: the reaper's candidates for RequeueExpired or
// SettleExpired.
func (s *Store) ExpiredLeases(ctx context.Context, now time.Time) ([]Run, error) {
	return store.Collect(ctx, s.db, scanRun, `SELECT `+runColumns+` FROM runs WHERE status = 'running'
		AND lease_expires_at > 0 AND lease_expires_at < ? ORDER BY lease_expires_at, uuid`, store.Micros(now))
}
