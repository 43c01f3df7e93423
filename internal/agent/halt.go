package agent

import (
	"context"
	"fmt"
)

// detach returns ctx without the caller's cancellation — a started run is
// settled even when its caller goes away — but ended when the runtime
// halts (Halt); release frees it once the segment returned.
func (rt *Runtime) detach(ctx context.Context) (_ context.Context, release func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(rt.halted, cancel)
	return ctx, func() { stop(); cancel() }
}

// Halt ends, at their next wait (a model or a tool call, a commit), the
// segments this runtime drives: the last step of a process's stop, once
// the running jobs had their soft-stop time. A halted segment writes
// nothing more and leaves its run running under its lease, for Release.
// A segment started after Halt stops at once.
func (rt *Runtime) Halt() { rt.halt() }

// Release hands back, at the end of a process's stop, the runs this
// runtime still holds (their segments halted): each lease is ended in one
// guarded update (only while the run still runs under this runtime's
// lease), and one reaper pass requeues them by the reaper's rules at once
// — a worker of another process, or of this one started again, takes them
// without waiting for the lease to expire. It reports how many runs it
// released.
func (rt *Runtime) Release(ctx context.Context) (int, error) {
	n, err := rt.runs.ExpireLeasesOf(ctx, rt.cfg.Identity)
	if err != nil || n == 0 {
		return n, err
	}
	if _, err := rt.Reap(ctx); err != nil {
		return n, fmt.Errorf("release %d runs: %w", n, err)
	}
	return n, nil
}
