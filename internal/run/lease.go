package run

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"waymark/internal/store"
)

// SetFence stamps the write fence of owner's running run: effect is JSON
// naming the tool call about to write. The reaper never retries a run whose
// fence names a non-idempotent write. It loses when the run is no longer
// owner's or no longer running; the write must then not start.
func (s *Store) SetFence(ctx context.Context, id, owner string, effect []byte) (bool, error) {
	return s.setFence(ctx, s.db, id, owner, effect)
}

// SetFenceTx is SetFence inside tx.
func (s *Store) SetFenceTx(ctx context.Context, tx *store.Tx, id, owner string, effect []byte) (bool, error) {
	return s.setFence(ctx, tx, id, owner, effect)
}

func (s *Store) setFence(ctx context.Context, q store.Querier, id, owner string, effect []byte) (bool, error) {
	if owner == "" {
		return false, invalid("fence", id, "lease owner is empty")
	}
	if len(effect) == 0 || !json.Valid(effect) {
		return false, invalid("fence", id, "effect is not JSON")
	}
	return s.fence(ctx, q, id, owner, string(effect))
}

// ClearFence clears the write fence of owner's running run once the tool
// step is recorded.
func (s *Store) ClearFence(ctx context.Context, id, owner string) (bool, error) {
	return s.fence(ctx, s.db, id, owner, "")
}

// ClearFenceTx is ClearFence inside tx, so it commits with the tool step.
func (s *Store) ClearFenceTx(ctx context.Context, tx *store.Tx, id, owner string) (bool, error) {
	return s.fence(ctx, tx, id, owner, "")
}

func (s *Store) fence(ctx context.Context, q store.Querier, id, owner, effect string) (bool, error) {
	if owner == "" {
		return false, invalid("fence", id, "lease owner is empty")
	}
	return s.guarded(ctx, q, id, update{op: "fence", set: `pending_effect = ?, updated_at = ?`,
		where: `status = 'running' AND lease_owner = ?`, args: []any{effect, store.Micros(s.clk.Now()), owner}}, Flush{})
}

// Requeuing is how Requeue hands a run back to the queue.
type Requeuing struct {
	Owner string // the segment that holds the run (the reaper: the expired holder)
	// Requeues is the requeue count the caller read; a concurrent requeue
	// makes it lose.
	Requeues int
}

// Requeue puts r.Owner's running run back in the queue for a retry: running
// → queued, requeue_count+1, lease released. The caller checks first that
// the run has a stored request and no fenced non-idempotent write.
func (s *Store) Requeue(ctx context.Context, id string, r Requeuing) (bool, error) {
	return s.requeue(ctx, s.db, id, r, false, Flush{})
}

// RequeueTx is Requeue inside tx, so it commits with the new queue job.
// It commits f with it.
func (s *Store) RequeueTx(ctx context.Context, tx *store.Tx, id string, r Requeuing, f Flush) (bool, error) {
	return s.requeue(ctx, tx, id, r, false, f)
}

// RequeueExpired is Requeue for the reaper: it wins only while r.Owner's
// lease is expired by the clock, so a concurrent Renew wins over the reaper.
func (s *Store) RequeueExpired(ctx context.Context, id string, r Requeuing) (bool, error) {
	return s.requeue(ctx, s.db, id, r, true, Flush{})
}

// RequeueExpiredTx is RequeueExpired inside tx.
func (s *Store) RequeueExpiredTx(ctx context.Context, tx *store.Tx, id string, r Requeuing) (bool, error) {
	return s.requeue(ctx, tx, id, r, true, Flush{})
}

func (s *Store) requeue(ctx context.Context, q store.Querier, id string, r Requeuing, expired bool, f Flush) (bool, error) {
	if r.Owner == "" {
		return false, invalid("requeue", id, "lease owner is empty")
	}
	now := store.Micros(s.clk.Now())
	where := `status = 'running' AND lease_owner = ? AND requeue_count = ?`
	args := []any{now, r.Owner, r.Requeues}
	if expired {
		where += ` AND lease_expires_at > 0 AND lease_expires_at < ?`
		args = append(args, now)
	}
	return s.guarded(ctx, q, id, update{op: "requeue", set: `status = 'queued', requeue_count = requeue_count + 1, lease_owner = '',
		lease_expires_at = 0, updated_at = ?`, where: where, args: args}, f)
}

// AddUsage adds u to the totals of owner's running run.
func (s *Store) AddUsage(ctx context.Context, id, owner string, u Usage) (bool, error) {
	return s.addUsage(ctx, s.db, id, owner, u)
}

// AddUsageTx is AddUsage inside tx.
func (s *Store) AddUsageTx(ctx context.Context, tx *store.Tx, id, owner string, u Usage) (bool, error) {
	return s.addUsage(ctx, tx, id, owner, u)
}

func (s *Store) addUsage(ctx context.Context, q store.Querier, id, owner string, u Usage) (bool, error) {
	if owner == "" {
		return false, invalid("usage", id, "lease owner is empty")
	}
	if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.Iterations < 0 {
		return false, invalid("usage", id, "usage %+v is negative", u)
	}
	return s.guarded(ctx, q, id, update{op: "usage", set: `updated_at = ?`,
		where: `status = 'running' AND lease_owner = ?`, args: []any{store.Micros(s.clk.Now()), owner}}, Flush{Usage: u})
}

// ExpireLeasesOf ends now the leases of the running runs whose lease owner
// names identity ("kind:IDENTITY:segment", agent.Config.Identity), so that
// the reaper's next pass takes them at once instead of a lease later: the
// stop of a process hands back the runs it still holds. One guarded update
// — only runs still running under such a lease that has not expired; a run
// settled, requeued or taken over meanwhile is left alone. It reports how
// many runs it released.
func (s *Store) ExpireLeasesOf(ctx context.Context, identity string) (int, error) {
	if identity == "" {
		return 0, invalid("expire leases", "", "identity is empty")
	}
	now := store.Micros(s.clk.Now())
	escaped := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(identity)
	res, err := s.db.Exec(ctx, `UPDATE runs SET lease_expires_at = ?, updated_at = ? WHERE status = 'running'
		AND lease_owner LIKE ? ESCAPE '!' AND lease_expires_at >= ?`, now-1, now, "%:"+escaped+":%", now)
	if err != nil {
		return 0, fmt.Errorf("expire leases of %s: %w", identity, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
