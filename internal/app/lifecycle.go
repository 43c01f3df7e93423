package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"waymark/internal/queue"
)

// DefaultShutdownTimeout is how long a stopping process lets its running
// jobs and requests finish (--shutdown-timeout).
const DefaultShutdownTimeout = 30 * time.Second

// hardStopWait bounds the wait for jobs to return once their contexts are
// cancelled: a job that ignores its context holds the stop no longer.
const hardStopWait = 10 * time.Second

// RunConfig is what Run runs besides the workers.
type RunConfig struct {
	// ShutdownTimeout is how long the stop lets running jobs and requests
	// finish (default DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	// Serve, when set, serves HTTP until its context ends, then stops
	// taking requests and lets those under way finish (httpapi.ServeWith);
	// it returns once they did.
	Serve func(ctx context.Context) error
	// Started, when set, is called once the workers run (and Serve was
	// started).
	Started func()
}

// Run is the lifecycle of a process: it starts the queue's workers and the
// HTTP server, runs until ctx ends (the signal) or the server fails, and
// then stops everything in order:
//
//  1. the server stops taking requests and the workers stop taking jobs;
//  2. the running jobs and requests get ShutdownTimeout to finish, and
//     every result that arrives meanwhile is applied: jobs never run under
//     ctx, only under a context this stop cancels;
//  3. then what still runs is cancelled: the jobs' contexts, and the
//     runtime's segments (Halt); the runs this process still holds are
//     released to the reaper at once (Runtime.Release), and a chat job
//     cancelled before its run began is retried by the queue, so another
//     worker — or this process started again — takes them without waiting
//     for a lease;
//  4. the chat is closed.
//
// The caller closes the store and the telemetry after Run returns.
func (a *App) Run(ctx context.Context, cfg RunConfig) error {
	soft := cfg.ShutdownTimeout
	if soft <= 0 {
		soft = DefaultShutdownTimeout
	}
	stop, err := a.startWorkers(soft)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	serveCtx, endServe := context.WithCancel(context.WithoutCancel(ctx))
	defer endServe()
	if cfg.Serve != nil {
		go func() { served <- cfg.Serve(serveCtx) }()
	}
	if cfg.Started != nil {
		cfg.Started()
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
		cfg.Serve = nil // returned already
	}
	endServe() // 1: no more requests; in-flight ones drain in Serve
	stopErr := stop()
	if cfg.Serve != nil {
		serveErr = <-served
	}
	return errors.Join(serveErr, stopErr)
}

// StartWorkers starts the queue's workers and the reaper without a server
// (tests); stop stops them as Run does — shutdown (0: the default) for the
// running jobs, then cancel and release — and closes the chat. The jobs
// never run under ctx: it only bounds the start.
func (a *App) StartWorkers(ctx context.Context, shutdown time.Duration) (stop func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if shutdown <= 0 {
		shutdown = DefaultShutdownTimeout
	}
	s, err := a.startWorkers(shutdown)
	if err != nil {
		return nil, err
	}
	return func() { _ = s() }, nil
}

// startWorkers starts the workers on a context of their own and returns
// the stop of steps 2–4 of Run.
func (a *App) startWorkers(soft time.Duration) (stop func() error, err error) {
	if err := a.Queue.Start(context.Background(), queue.Handlers{Runs: a.Runtime, Chat: a.Chat, Resume: a.Runtime, Reap: a.reap, Campaign: a.Campaigns}); err != nil {
		return nil, fmt.Errorf("start workers: %w", err)
	}
	a.DB.ListenForSignals() // a Stop sent from another process reaches the turns run here
	return func() error { return a.stop(soft) }, nil
}

// stop is steps 2–4 of Run.
func (a *App) stop(soft time.Duration) error {
	began := time.Now()
	sctx, cancel := context.WithTimeout(context.Background(), soft)
	err := a.Queue.Stop(sctx) // 2: running jobs finish, their results applied
	cancel()
	hard := err != nil
	if hard { // 3: past the soft-stop time
		a.log.Warn("jobs still running after the shutdown timeout; cancelling them", "timeout", soft)
		hctx, cancel := context.WithTimeout(context.Background(), hardStopWait)
		a.Runtime.Halt() // the segments detached from their jobs' contexts
		err = a.Queue.StopAndCancel(hctx)
		cancel()
		if err != nil {
			err = fmt.Errorf("stop workers: jobs did not return within %v of their cancel: %w", hardStopWait, err)
		}
	}
	a.Runtime.Halt() // segments of requests the server cut off, too
	rctx, cancel := context.WithTimeout(context.Background(), hardStopWait)
	n, rerr := a.Runtime.Release(rctx)
	cancel()
	if rerr != nil {
		rerr = fmt.Errorf("release runs: %w", rerr)
	}
	a.Close() // 4
	a.log.Info("stopped", "took", time.Since(began).Round(time.Millisecond), "cancelled", hard, "released", n)
	return errors.Join(err, rerr)
}
