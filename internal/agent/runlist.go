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
// administrator sees — the administration's run list. Only an active
// administrator may list (ErrNotPermitted otherwise); a malformed filter is
// ErrInvalid naming the parameter.
func (rt *Reader) List(ctx context.Context, actor int64, f RunFilter) (RunPage, error) {
	a, err := access.LoadActor(ctx, rt.dir, rt.db, actor)
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
	p := run.FindParams{Status: f.Status, Configuration: f.Configuration, Initiator: f.Initiator, From: f.From, To: f.To,
		Limit: f.Limit + 1}
	if f.After != "" {
		at, id, ok := strings.Cut(f.After, ".")
		n, err := strconv.ParseInt(at, 10, 64)
		if !ok || err != nil || id == "" {
			return RunPage{}, invalidf("after: not a cursor of this list")
		}
		p.After = &run.Found{UUID: id, CreatedAt: n}
	}
	found, err := rt.runs.Find(ctx, p)
	if err != nil {
		return RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	page := RunPage{Runs: []Status{}}
	if len(found) > f.Limit {
		found = found[:f.Limit]
		last := found[len(found)-1]
		page.Next = strconv.FormatInt(last.CreatedAt, 10) + "." + last.UUID
	}
	for _, r := range found {
		st, err := rt.Status(ctx, actor, r.UUID)
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
