package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"waymark/internal/access"
	"waymark/internal/run"
	"waymark/internal/store"
)

// Limits of a page of List.
const (
	DefaultRunListLimit = 50
	MaxRunListLimit     = 200
)

// RunFilter selects the runs of List; zero fields do not filter.
type RunFilter struct {
	Status        run.Status
	Configuration int64
	Initiator     int64
	From, To      time.Time // created at or after From, before To
	After         string    // Next of the previous page
	Limit         int       // 0: DefaultRunListLimit
}

// RunPage is one page of List, newest first; Next is the cursor of the
// following page ("" on the last).
type RunPage struct {
	Runs []Status `json:"runs"`
	Next string   `json:"next"`
}

// List answers the runs matching f, newest first, as the RunStatus an
// administrator sees — the run list of issue 14. Only an active
// administrator may list (ErrNotPermitted otherwise); a malformed filter is
// ErrInvalid naming the parameter.
func (rt *Runtime) List(ctx context.Context, actor int64, f RunFilter) (RunPage, error) {
	a, err := access.LoadActor(ctx, rt.db, actor)
	if errors.Is(err, access.ErrNoUser) || (err == nil && !a.IsAdmin()) {
		return RunPage{}, ErrNotPermitted
	}
	if err != nil {
		return RunPage{}, err
	}
	if f.Limit == 0 {
		f.Limit = DefaultRunListLimit
	}
	if f.Limit < 1 || f.Limit > MaxRunListLimit {
		return RunPage{}, invalidf("limit: want 1 to %d, got %d", MaxRunListLimit, f.Limit)
	}
	if f.Status != "" && !f.Status.Valid() {
		return RunPage{}, invalidf("status: unknown run status %q", f.Status)
	}
	q := "SELECT created_at, uuid FROM runs WHERE 1 = 1"
	var args []any
	add := func(cond string, v ...any) { q += " AND " + cond; args = append(args, v...) }
	if f.Status != "" {
		add("status = ?", string(f.Status))
	}
	if f.Configuration != 0 {
		add("configuration = ?", f.Configuration)
	}
	if f.Initiator != 0 {
		add("initiator = ?", f.Initiator)
	}
	if !f.From.IsZero() {
		add("created_at >= ?", store.Micros(f.From))
	}
	if !f.To.IsZero() {
		add("created_at < ?", store.Micros(f.To))
	}
	if f.After != "" {
		at, id, ok := strings.Cut(f.After, ".")
		n, err := strconv.ParseInt(at, 10, 64)
		if !ok || err != nil || id == "" {
			return RunPage{}, invalidf("after: not a cursor of this list")
		}
		add("(created_at < ? OR (created_at = ? AND uuid < ?))", n, n, id)
	}
	q += fmt.Sprintf(" ORDER BY created_at DESC, uuid DESC LIMIT %d", f.Limit+1)
	type row struct {
		at   int64
		uuid string
	}
	var found []row
	rows, err := rt.db.Query(ctx, q, args...)
	if err != nil {
		return RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.at, &r.uuid); err != nil {
			rows.Close()
			return RunPage{}, fmt.Errorf("list runs: %w", err)
		}
		found = append(found, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	page := RunPage{Runs: []Status{}}
	if len(found) > f.Limit {
		found = found[:f.Limit]
		last := found[len(found)-1]
		page.Next = strconv.FormatInt(last.at, 10) + "." + last.uuid
	}
	for _, r := range found {
		st, err := rt.Status(ctx, actor, r.uuid)
		if errors.Is(err, ErrNotFound) {
			continue // purged meanwhile
		}
		if err != nil {
			return RunPage{}, err
		}
		page.Runs = append(page.Runs, st)
	}
	return page, nil
}
