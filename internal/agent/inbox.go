package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"waymark/internal/access"
	"waymark/internal/run"
)

// Limits of an inbox page.
const (
	DefaultInboxLimit = 50
	MaxInboxLimit     = 200
)

// inboxBatch is how many waiting runs one query of Inbox reads.
const inboxBatch = 200

// InboxPage is one page of the inbox, newest first. Next is the cursor of
// the following page ("" when this is the last).
type InboxPage struct {
	Runs []Status `json:"runs"`
	Next string   `json:"next"`
}

// Inbox is the first page of InboxAfter with the default limit.
func (rt *Reader) Inbox(ctx context.Context, actor int64) ([]Status, error) {
	page, err := rt.InboxAfter(ctx, actor, "", 0)
	return page.Runs, err
}

// InboxAfter lists, newest first, the runs waiting for an approval that actor may
// release: administrators and approvers in scope of the run (see
// approverScope) any, an initiator its own — except on four-eyes
// configurations, where a second person releases. It filters before it
// limits: the page holds up to limit runs the actor may
// decide, however many others wait. after is the Next of the previous page
// ("" for the first); limit 0 is DefaultInboxLimit.
func (rt *Reader) InboxAfter(ctx context.Context, actor int64, after string, limit int) (InboxPage, error) {
	if limit == 0 {
		limit = DefaultInboxLimit
	}
	if limit < 1 || limit > MaxInboxLimit {
		return InboxPage{}, invalidf("limit: want 1 to %d, got %d", MaxInboxLimit, limit)
	}
	cur, err := parseInboxCursor(after)
	if err != nil {
		return InboxPage{}, err
	}
	page := InboxPage{Runs: []Status{}}
	a, err := access.LoadActor(ctx, rt.dir, rt.db, actor)
	if errors.Is(err, access.ErrNoUser) || (err == nil && !a.Active()) {
		return page, nil
	}
	if err != nil {
		return InboxPage{}, err
	}
	// Only administrators and approvers decide others' runs: anyone else's
	// inbox reads their own runs only.
	own := !a.IsAdmin() && !a.HasGrant(access.GrantApprove)
	var last inboxCursor // of the last run put on the page
	for {
		batch, err := rt.waitingRuns(ctx, actor, own, cur)
		if err != nil {
			return InboxPage{}, err
		}
		for _, c := range batch {
			cur = &c
			r, err := rt.runs.Get(ctx, c.uuid)
			if errors.Is(err, run.ErrNotFound) {
				continue // decided and purged meanwhile
			}
			if err != nil { // a failed read is not an empty inbox
				return InboxPage{}, err
			}
			who, err := rt.viewerOf(ctx, a, r)
			if err != nil {
				return InboxPage{}, err
			}
			if who == noViewer {
				continue
			}
			v := rt.view(ctx, a, r, who)
			if v.Pending == nil || v.Pending.ApproveBlocked != "" {
				continue
			}
			if len(page.Runs) == limit {
				page.Next = last.String()
				return page, nil
			}
			page.Runs = append(page.Runs, v)
			last = c
		}
		if len(batch) < inboxBatch {
			return page, nil
		}
	}
}

// inboxCursor is a position in the inbox order (created_at, uuid) descending.
type inboxCursor struct {
	createdAt int64 // µs
	uuid      string
}

// String encodes the cursor: "<created_at µs>.<uuid>".
func (c inboxCursor) String() string { return strconv.FormatInt(c.createdAt, 10) + "." + c.uuid }

func parseInboxCursor(s string) (*inboxCursor, error) {
	if s == "" {
		return nil, nil
	}
	at, id, ok := strings.Cut(s, ".")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" {
		return nil, invalidf("after: not a cursor of this inbox")
	}
	return &inboxCursor{createdAt: n, uuid: id}, nil
}

// waitingRuns reads the next batch of runs waiting for approval after cur
// (nil: from the newest), newest first; own: only actor's.
func (rt *Reader) waitingRuns(ctx context.Context, actor int64, own bool, cur *inboxCursor) ([]inboxCursor, error) {
	p := run.FindParams{Status: run.StatusWaitingForApproval, Limit: inboxBatch}
	if own {
		p.Initiator = actor
	}
	if cur != nil {
		p.After = &run.Found{UUID: cur.uuid, CreatedAt: cur.createdAt}
	}
	batch, err := rt.runs.Find(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	out := make([]inboxCursor, len(batch))
	for i, w := range batch {
		out[i] = inboxCursor{createdAt: w.CreatedAt, uuid: w.UUID}
	}
	return out, nil
}
