package main

import (
	"context"
	"fmt"
	"time"

	"waymark/internal/retention"
	"waymark/internal/store"
)

// checkRetention refuses bad retention options (--older-than,
// --waiting-older-than; --purge-every of serve and worker) before
// anything is opened.
func (f *flags) checkRetention() error {
	if f.OlderThan <= 0 || f.WaitingOlderThan <= 0 {
		return fmt.Errorf("%w: retention windows must be positive", errUsage)
	}
	if f.PurgeEvery < 0 || f.PurgeEvery > 0 && f.PurgeEvery < time.Second {
		return fmt.Errorf("%w: --purge-every must be 0 (never) or at least 1s, got %v", errUsage, f.PurgeEvery)
	}
	return nil
}

// purger returns the purger of the retention windows.
func (f *flags) purger(db *store.DB, e *env) (*retention.Purger, error) {
	return retention.New(db, &retention.Config{OlderThan: f.OlderThan, WaitingOlderThan: f.WaitingOlderThan, Logger: e.log})
}

// schedulePurges starts the purges of --purge-every on db (none for 0);
// the returned stop ends them, waiting for one under way.
func (f *flags) schedulePurges(ctx context.Context, e *env, db *store.DB) (stop func(), err error) {
	if f.PurgeEvery == 0 {
		return func() {}, nil
	}
	p, err := f.purger(db, e)
	if err != nil {
		return nil, err
	}
	return p.Schedule(ctx, f.PurgeEvery, nil), nil
}
