package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"waymark/internal/store"
)

// reconcile hands back a card decided elsewhere (the inbox): a conversation
// awaiting approval whose run was released or denied and has settled goes
// idle, shows what was written (from tool_write events, record identities
// only) and records the run as the next turn's predecessor.
func (s *Service) reconcile(ctx context.Context, r row) (row, error) {
	if r.Status == Processing {
		return s.recoverInterrupted(ctx, r)
	}
	if r.Status != AwaitingApproval || r.PendingRun == "" {
		return r, nil
	}
	st, err := s.rt.Status(ctx, r.Owner, r.PendingRun)
	if err != nil || !st.Status.Terminal() {
		return r, nil
	}
	var written []string
	if evs, err := s.rt.Events(ctx, r.Owner, r.PendingRun, 0, 0); err == nil {
		for _, e := range evs {
			if e.Kind != "tool_write" {
				continue
			}
			var w struct {
				Table  string   `json:"table"`
				UID    int64    `json:"uid"`
				Fields []string `json:"fields"`
			}
			if json.Unmarshal(e.Payload, &w) == nil {
				written = append(written, fmt.Sprintf("%s:%d (%s)", w.Table, w.UID, strings.Join(w.Fields, ", ")))
			}
		}
	}
	notice := "released_elsewhere"
	if len(written) > 0 {
		notice += ": " + strings.Join(written, "; ")
	}
	run, empty, none := r.PendingRun, "", (*Card)(nil)
	now := s.now()
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		won, err := casTx(ctx, tx, r.ID, []Status{AwaitingApproval}, change{status: Idle, lastRun: &run, pendingRun: &empty, card: &none}, now)
		if err != nil || !won {
			return err
		}
		return addMessageTx(ctx, tx, r.ID, Message{Role: "assistant", Notice: notice}, now)
	})
	if err != nil {
		return r, err
	}
	return getRow(ctx, s.db, r.ID)
}

// interruptedAfter is how long a turn may stay processing before a read
// treats it as interrupted (the process that ran it stopped).
const interruptedAfter = 5 * time.Minute

// recoverInterrupted settles a conversation whose turn was interrupted (the
// process running it stopped): once its run has ended — the reaper ends an
// abandoned one — or, without a run, after a while, the conversation goes on
// from what the run shows.
func (s *Service) recoverInterrupted(ctx context.Context, r row) (row, error) {
	if s.clk.Now().Sub(r.UpdatedAt) < interruptedAfter {
		return r, nil
	}
	if r.PendingRun != "" {
		st, err := s.rt.Status(ctx, r.Owner, r.PendingRun)
		if err != nil || !(st.Status.Terminal() || st.Status.Waiting()) {
			return r, nil
		}
		s.apply(ctx, r.ID, r.PendingRun, "")
		return getRow(ctx, s.db, r.ID)
	}
	s.fail(ctx, r, errors.New("interrupted"))
	return getRow(ctx, s.db, r.ID)
}

// pointsPrompt offers the open points of the conversation's skill on its page
// again (P.O1) — through the keeper when it can list them.
func (s *Service) pointsPrompt(ctx context.Context, r row) string {
	type lister interface {
		PromptFor(ctx context.Context, skill, page int64) (string, error)
	}
	l, ok := s.points.(lister)
	if !ok || r.Skill == 0 || r.Page == 0 {
		return ""
	}
	text, err := l.PromptFor(ctx, r.Skill, r.Page)
	if err != nil {
		return ""
	}
	return text
}
