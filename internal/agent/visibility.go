package agent

import (
	"context"
	"errors"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
)

// viewer is how much of a run a caller may see.
type viewer int

const (
	// noViewer sees nothing: the run answers like an unknown one.
	noViewer viewer = iota
	// approverViewer holds the approve grant and is in scope of a waiting
	// run: it sees the run's status and card and may decide, never the
	// transcript.
	approverViewer
	// ownerViewer is the initiator or an administrator: everything.
	ownerViewer
)

// visibleRun loads a run the actor may see — its initiator, an
// administrator, or an approver in scope of the waiting run (approverScope) —
// with the actor as stored now and how much it may see. Unknown and
// invisible runs are ErrNotFound alike.
func (rt *Reader) visibleRun(ctx context.Context, actor int64, id string) (run.Run, *access.Actor, viewer, error) {
	return rt.visibleRunRead(ctx, actor, id, rt.runs.Get)
}

// visibleRunRead is visibleRun reading the run with read (the status view
// reads it with its events: run.Store.GetWithEvents).
func (rt *Reader) visibleRunRead(ctx context.Context, actor int64, id string, read func(context.Context, string) (run.Run, error)) (run.Run, *access.Actor, viewer, error) {
	a, err := access.LoadActor(ctx, rt.dir, rt.db, actor)
	if errors.Is(err, access.ErrNoUser) {
		return run.Run{}, nil, noViewer, ErrNotFound
	}
	if err != nil {
		return run.Run{}, nil, noViewer, err
	}
	r, err := read(ctx, id)
	if errors.Is(err, run.ErrNotFound) {
		return run.Run{}, nil, noViewer, ErrNotFound
	}
	if err != nil {
		return run.Run{}, nil, noViewer, err
	}
	v, err := rt.viewerOf(ctx, a, r)
	if err != nil {
		return run.Run{}, nil, noViewer, err
	}
	if v == noViewer {
		return run.Run{}, nil, noViewer, ErrNotFound
	}
	return r, a, v, nil
}

// ownRun is visibleRun for what only the initiator and administrators may
// see (the transcript): anyone else, approvers included, gets ErrNotFound.
func (rt *Reader) ownRun(ctx context.Context, actor int64, id string) (run.Run, *access.Actor, error) {
	r, a, v, err := rt.visibleRun(ctx, actor, id)
	if err != nil {
		return run.Run{}, nil, err
	}
	if v != ownerViewer {
		return run.Run{}, nil, ErrNotFound
	}
	return r, a, nil
}

// viewerOf decides how much of r the actor sees, reading everything it
// depends on as stored now.
func (rt *Reader) viewerOf(ctx context.Context, a *access.Actor, r run.Run) (viewer, error) {
	switch {
	case !a.Active():
		return noViewer, nil
	case a.IsAdmin() || a.UID == r.Initiator:
		return ownerViewer, nil
	case r.Status != run.StatusWaitingForApproval || !a.HasGrant(access.GrantApprove):
		return noViewer, nil
	}
	ok, err := rt.approverScope(ctx, a, r)
	if err != nil || !ok {
		return noViewer, err
	}
	return approverViewer, nil
}

// approverScope reports whether a holder of the approve grant may see and
// decide the waiting run r: they may use its configuration, and may read
// every pending call's target record — its table, its page through their
// mounts and page permissions, its language — as all of these are now. A
// write that names no target record, a suspended state that cannot be read
// and a target that is gone refuse (fail closed).
func (rt *Reader) approverScope(ctx context.Context, a *access.Actor, r run.Run) (bool, error) {
	cfg, err := rt.configs.Get(ctx, r.Configuration)
	if errors.Is(err, llmconfig.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !llmconfig.MayUse(a, cfg) {
		return false, nil
	}
	s, err := decodeSuspendedView(r.Suspended)
	if err != nil {
		return false, nil
	}
	checker := access.NewChecker(rt.db, rt.src, rt.dir)
	for _, c := range s.Calls {
		if c.Target == nil {
			if c.DeclaresWrite {
				return false, nil
			}
			continue
		}
		rec, err := rt.src.Get(ctx, rt.db, c.Target.Table, c.Target.UID)
		if errors.Is(err, content.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !a.MayEditLanguage(rec.Language) {
			return false, nil
		}
		if ok, err := checker.ActorMayReadRecord(ctx, a, rec); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// withStatus adds the run's status as the decider sees it now.
func (rt *Reader) withStatus(ctx context.Context, a *access.Actor, v viewer, res Result) Result {
	ctx, end := rt.db.ReadScope(ctx)
	defer end()
	if r, err := rt.runs.GetWithEvents(ctx, res.UUID, rt.statusEventKinds()...); err == nil {
		st := rt.view(ctx, a, r, v)
		if res.Answer != "" && v == ownerViewer {
			st.Answer = res.Answer
		}
		res.Status = &st
	}
	return res
}
