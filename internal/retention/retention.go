// Package retention deletes what Waymark keeps only for a while: finished
// runs (with their events) finished longer ago than the retention window,
// runs waiting for a decision untouched longer than theirs, and expired
// sessions. `waymark purge` does it once; serve and worker do it on a
// schedule (--purge-every), one process of the installation at a time.
package retention

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"waymark/internal/auth"
	"waymark/internal/clock"
	"waymark/internal/run"
	"waymark/internal/store"
)

// The default retention windows (--older-than, --waiting-older-than).
const (
	DefaultOlderThan        = 720 * time.Hour  // 30 days
	DefaultWaitingOlderThan = 2160 * time.Hour // 90 days
)

// Config tunes a Purger; zero values take the defaults.
type Config struct {
	OlderThan        time.Duration // finished runs finished longer ago go (default DefaultOlderThan)
	WaitingOlderThan time.Duration // runs waiting for a decision untouched this long go (default DefaultWaitingOlderThan)
	Clock            clock.Clock   // decides what is past retention (default the wall clock)
	Logger           *slog.Logger  // reports scheduled purges (default: discarded)
}

// Purger deletes what is past retention.
type Purger struct {
	db    *store.DB
	runs  *run.Store
	auth  *auth.Authenticator
	clk   clock.Clock
	log   *slog.Logger
	older time.Duration
	wait  time.Duration
}

// New returns a Purger of db. A negative window is refused, naming it.
func New(db *store.DB, cfg *Config) (*Purger, error) {
	if db == nil {
		return nil, errors.New("retention: db is required")
	}
	if cfg == nil {
		cfg = &Config{}
	}
	if cfg.OlderThan < 0 || cfg.WaitingOlderThan < 0 {
		return nil, errors.New("retention: Config.OlderThan and WaitingOlderThan must not be negative")
	}
	clk := cmp.Or[clock.Clock](cfg.Clock, clock.Real{})
	return &Purger{db: db, runs: run.NewStore(db, clk), auth: auth.New(db, clk), clk: clk,
		log:   cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		older: cmp.Or(cfg.OlderThan, DefaultOlderThan), wait: cmp.Or(cfg.WaitingOlderThan, DefaultWaitingOlderThan)}, nil
}

// Result is what one purge deleted.
type Result struct {
	Runs     int   // runs, with their events
	Sessions int64 // expired sessions
	// Skipped says that another process of the installation was purging
	// (PostgreSQL), so this one deleted nothing.
	Skipped bool
}

// LockName is the installation-wide lock of purges (store.DB.WithTryLock):
// a process that holds it is purging.
const LockName = "retention.purge"

// Purge deletes what is past retention now, unless another process is
// purging at this moment (then Result.Skipped: it does the same work).
func (p *Purger) Purge(ctx context.Context) (Result, error) {
	var r Result
	ran, err := p.db.WithTryLock(ctx, LockName, func(ctx context.Context) error {
		now := p.clk.Now()
		n, err := p.runs.Purge(ctx, now.Add(-p.older), now.Add(-p.wait))
		if err != nil {
			return err
		}
		r.Runs = n
		if r.Sessions, err = p.auth.PurgeSessions(ctx); err != nil {
			return err
		}
		return nil
	})
	r.Skipped = !ran && err == nil
	return r, err
}

// Schedule purges at once and then at every tick until ctx ends or stop is
// called; stop waits for a purge under way. A failed purge is logged and
// tried again at the next tick. ticks nil is a ticker of every (> 0).
func (p *Purger) Schedule(ctx context.Context, every time.Duration, ticks <-chan time.Time) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var ticker *time.Ticker
	if ticks == nil {
		ticker = time.NewTicker(every)
		ticks = ticker.C
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			p.scheduled(ctx, every)
			select {
			case <-ctx.Done():
				return
			case <-ticks:
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
		if ticker != nil {
			ticker.Stop()
		}
	}
}

// scheduled is one purge of Schedule, logged.
func (p *Purger) scheduled(ctx context.Context, every time.Duration) {
	r, err := p.Purge(ctx)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		p.log.Warn("scheduled purge failed; tried again at the next", "every", every.String(), "err", fmt.Errorf("purge: %w", err))
	case r.Skipped:
		p.log.Debug("scheduled purge skipped: another process is purging")
	case r.Runs > 0 || r.Sessions > 0:
		p.log.Info("purged", "runs", r.Runs, "sessions", r.Sessions, "older_than", p.older.String(), "waiting_older_than", p.wait.String())
	default:
		p.log.Debug("purged nothing")
	}
}
