package agent

import (
	"context"
)

// detach returns ctx without the caller's cancellation — a started run is
// settled even when its caller goes away — but ended when the runtime
// halts (Halt); release frees it once the segment returned.
func (rt *Driver) detach(ctx context.Context) (_ context.Context, release func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(rt.halted, cancel)
	return ctx, func() { stop(); cancel() }
}

// Halt ends, at their next wait (a model or a tool call, a commit), the
// segments this runtime drives: the last step of a process's stop, once
// the running jobs had their soft-stop time. A halted segment writes
// nothing more and leaves its run running under its lease, for Release.
// A segment started after Halt stops at once.
func (rt *Driver) Halt() { rt.halt() }
