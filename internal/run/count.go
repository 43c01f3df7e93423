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

// CountOpen counts initiator's open runs (OpenStatuses) through q.
func CountOpen(ctx context.Context, q store.Querier, initiator int64) (int, error) {
	var n int
	open := OpenStatuses()
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM runs WHERE initiator = ? AND status IN (?, ?, ?)", initiator,
		string(open[0]), string(open[1]), string(open[2])).Scan(&n); err != nil {
		return 0, fmt.Errorf("open runs of user %d: %w", initiator, err)
	}
	return n, nil
}

// Found is a run as Find lists it: its uuid and creation time, which
// together are the order and the cursor of a page.
type Found struct {
	UUID      string
	CreatedAt int64 // unix µs
}

// FindParams selects runs; zero fields do not filter.
type FindParams struct {
	Status        Status
	Configuration int64
	Initiator     int64
	From, To      time.Time // created at or after From, before To
	After         *Found    // nil: from the newest; else the runs after it in the order
	Limit         int
}

// Find lists the runs matching p, newest first (by creation time, then
// uuid), up to p.Limit: the inbox's batches and the administrators' run list.
func (s *Store) Find(ctx context.Context, p FindParams) ([]Found, error) {
	q := "SELECT created_at, uuid FROM runs WHERE 1 = 1"
	var args []any
	add := func(cond string, v ...any) { q += " AND " + cond; args = append(args, v...) }
	if p.Status != "" {
		add("status = ?", string(p.Status))
	}
	if p.Configuration != 0 {
		add("configuration = ?", p.Configuration)
	}
	if p.Initiator != 0 {
		add("initiator = ?", p.Initiator)
	}
	if !p.From.IsZero() {
		add("created_at >= ?", store.Micros(p.From))
	}
	if !p.To.IsZero() {
		add("created_at < ?", store.Micros(p.To))
	}
	if p.After != nil {
		add("(created_at < ? OR (created_at = ? AND uuid < ?))", p.After.CreatedAt, p.After.CreatedAt, p.After.UUID)
	}
	q += fmt.Sprintf(" ORDER BY created_at DESC, uuid DESC LIMIT %d", p.Limit)
	out, err := store.Collect(ctx, s.db, func(sc store.Scanner) (Found, error) {
		var f Found
		err := sc.Scan(&f.CreatedAt, &f.UUID)
		return f, err
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("find runs: %w", err)
	}
	return out, nil
}

// CountByStatus counts the runs of each status; every status is present.
func (s *Store) CountByStatus(ctx context.Context) (map[Status]int, error) {
	out := map[Status]int{}
	for _, st := range Statuses() {
		out[st] = 0
	}
	type count struct {
		status string
		n      int
	}
	counts, err := store.Collect(ctx, s.db, func(sc store.Scanner) (count, error) {
		var c count
		err := sc.Scan(&c.status, &c.n)
		return c, err
	}, "SELECT status, COUNT(*) FROM runs GROUP BY status")
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	for _, c := range counts {
		out[Status(c.status)] = c.n
	}
	return out, nil
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

// QueuedMark is a queued run as QueuedBefore lists it: its uuid and last
// change, the position the next page starts after.
type QueuedMark struct {
	UUID      string
	UpdatedAt int64 // microseconds, as stored
}

// QueuedBefore lists up to limit queued runs last changed before `before`,
// oldest first, after the mark `after` (the zero mark: from the start) — the
// reaper's candidates for a lost job (runs are read here).
func (s *Store) QueuedBefore(ctx context.Context, before time.Time, after QueuedMark, limit int) ([]QueuedMark, error) {
	out, err := store.Collect(ctx, s.db, func(sc store.Scanner) (QueuedMark, error) {
		var m QueuedMark
		err := sc.Scan(&m.UUID, &m.UpdatedAt)
		return m, err
	}, `SELECT uuid, updated_at FROM runs WHERE status = ? AND updated_at < ?
		AND (updated_at > ? OR (updated_at = ? AND uuid > ?)) ORDER BY updated_at, uuid LIMIT ?`,
		string(StatusQueued), store.Micros(before), after.UpdatedAt, after.UpdatedAt, after.UUID, limit)
	if err != nil {
		return nil, fmt.Errorf("queued runs: %w", err)
	}
	return out, nil
}
