package run

import (
	"context"
	"fmt"
	"time"

	"waymark/internal/store"
)

// Queries of the runs table for other packages: the open-runs cap (agent),
// the inbox (agent) and the metrics (app). The runs table is this package's;
// no other package queries it.

// OpenStatuses are the statuses a run counts against its initiator's cap
// of open runs: queued, or waiting for a decision or an input.
func OpenStatuses() []Status {
	return []Status{StatusQueued, StatusWaitingForApproval, StatusWaitingForInput}
}

// CountOpenTx counts initiator's open runs (OpenStatuses) through q, the
// transaction that would store a new one.
func (s *Store) CountOpenTx(ctx context.Context, q store.Querier, initiator int64) (int, error) {
	var n int
	open := OpenStatuses()
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM runs WHERE initiator = ? AND status IN (?, ?, ?)", initiator,
		string(open[0]), string(open[1]), string(open[2])).Scan(&n); err != nil {
		return 0, fmt.Errorf("open runs of user %d: %w", initiator, err)
	}
	return n, nil
}

// Waiting is a run waiting for approval, as a page of the inbox reads it.
type Waiting struct {
	UUID      string
	CreatedAt int64 // unix µs: with UUID, the order and cursor of the inbox
}

// WaitingParams selects a batch of runs waiting for approval.
type WaitingParams struct {
	Initiator int64    // 0: every initiator's
	After     *Waiting // nil: from the newest; else those after it in the order
	Limit     int
}

// WaitingForApproval reads runs waiting for approval, newest first (by
// creation time, then uuid), up to p.Limit.
func (s *Store) WaitingForApproval(ctx context.Context, p WaitingParams) ([]Waiting, error) {
	q := "SELECT created_at, uuid FROM runs WHERE status = ?"
	args := []any{string(StatusWaitingForApproval)}
	if p.Initiator != 0 {
		q += " AND initiator = ?"
		args = append(args, p.Initiator)
	}
	if p.After != nil {
		q += " AND (created_at < ? OR (created_at = ? AND uuid < ?))"
		args = append(args, p.After.CreatedAt, p.After.CreatedAt, p.After.UUID)
	}
	q += fmt.Sprintf(" ORDER BY created_at DESC, uuid DESC LIMIT %d", p.Limit)
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("waiting runs: %w", err)
	}
	defer rows.Close()
	var out []Waiting
	for rows.Next() {
		var w Waiting
		if err := rows.Scan(&w.CreatedAt, &w.UUID); err != nil {
			return nil, fmt.Errorf("waiting runs: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// CountByStatus counts the runs of each status; every status is present.
func (s *Store) CountByStatus(ctx context.Context) (map[Status]int, error) {
	out := map[Status]int{}
	for _, st := range Statuses() {
		out[st] = 0
	}
	rows, err := s.db.Query(ctx, "SELECT status, COUNT(*) FROM runs GROUP BY status")
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("count runs: %w", err)
		}
		out[Status(st)] = n
	}
	return out, rows.Err()
}

// OldestQueued returns the creation time of the oldest queued run; the zero
// time when none is queued.
func (s *Store) OldestQueued(ctx context.Context) (time.Time, error) {
	var oldest int64
	if err := s.db.QueryRow(ctx, "SELECT COALESCE(MIN(created_at), 0) FROM runs WHERE status = ?", string(StatusQueued)).Scan(&oldest); err != nil {
		return time.Time{}, fmt.Errorf("oldest queued run: %w", err)
	}
	return store.Time(oldest), nil
}
