package agent

import (
	"context"
	"time"

	"waymark/internal/run"
)

// heartbeat runs f (a model call, a tool call) while renewing the segment's
// lease every Config.Heartbeat: a segment that waits keeps
// its run however long the wait, and a process that stopped loses its runs
// within one lease, for the reaper. A renewal that loses (the run was
// cancelled, reaped or ended elsewhere) cancels f's context; a renewal that
// fails is tried again at the next beat. Renewals commit nothing else: the
// buffered events wait for the next step boundary. A cancel of the run
// (run.CancelledKey) brings the next renewal forward, so a Stop ends the
// call at once — from another process too on PostgreSQL, whose signals
// reach every process; on SQLite at the next beat.
func (s *segment) heartbeat(ctx context.Context, f func(ctx context.Context) error) error {
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	stopped := make(chan struct{})
	cut, unwatch := s.rt.db.Watch(run.CancelledKey(s.run.UUID))
	go func() {
		defer close(stopped)
		defer unwatch()
		t := time.NewTicker(s.rt.cfg.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-fctx.Done():
				return
			case <-cut:
				cut = nil // a cancel is final: the renewal below loses
			case <-t.C:
			}
			won, err := s.rt.runs.Renew(context.WithoutCancel(ctx), s.run.UUID, run.Renewal{Owner: s.owner, Lease: s.rt.cfg.Lease})
			if err != nil {
				s.rt.log.Warn("lease renewal failed", "run", s.run.UUID, "err", err)
				continue
			}
			if !won {
				s.rt.log.Info("lease lost while waiting; the call is cancelled", "run", s.run.UUID, "owner", s.owner)
				cancel()
				return
			}
			if s.rt.cfg.Test.AfterBeat != nil {
				s.rt.cfg.Test.AfterBeat(s.run.UUID)
			}
		}
	}()
	err := f(fctx)
	close(done)
	<-stopped
	return err
}
