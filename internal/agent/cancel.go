package agent

import (
	"context"

	"waymark/internal/run"
)

// Cancel ends run id as cancelled from any non-terminal status, as its
// initiator or an administrator. A running segment stops cooperatively at its
// next step boundary. It reports whether this call ended the run.
func (rt *Decider) Cancel(ctx context.Context, actor int64, id string) (bool, error) {
	return rt.cancel(ctx, actor, id, false)
}

// CancelIfWaiting cancels run id only while it waits for a decision (the
// guarded waiting-only transition), as its initiator or an administrator, and
// reports whether it won.
func (rt *Decider) CancelIfWaiting(ctx context.Context, actor int64, id string) (bool, error) {
	return rt.cancel(ctx, actor, id, true)
}

func (rt *Decider) cancel(ctx context.Context, actor int64, id string, waitingOnly bool) (bool, error) {
	r, _, err := rt.ownRun(ctx, actor, id)
	if err != nil {
		return false, err
	}
	ctx = context.WithoutCancel(ctx)
	var won bool
	if waitingOnly {
		won, err = rt.runs.CancelIfWaiting(ctx, id)
	} else {
		won, err = rt.runs.Cancel(ctx, id)
	}
	if err != nil || !won {
		return false, err
	}
	priv := run.PrivacyMetadata
	if cfg, err := rt.configs.Get(ctx, r.Configuration); err == nil {
		priv = privacyOf(cfg)
	}
	if _, err := rt.runs.AppendEvent(ctx, id, run.EventStatus, map[string]any{"status": run.StatusCancelled,
		"reason": run.ReasonCancelled, "cancelledBy": actor}, priv); err != nil {
		rt.log.Warn("cancel event not stored", "run", id, "err", err)
	}
	return true, nil
}
