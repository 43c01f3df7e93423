package main

import (
	"context"
	"fmt"
	"time"

	"waymark/internal/store"
)

// openDB opens and migrates the database raw (--db), with the store's
// fast paths off under --store-no-fast-paths.
func (f *flags) openDB(ctx context.Context, raw string) (*store.DB, error) {
	if _, err := store.ParseURL(raw); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	db, err := store.OpenConfig(ctx, raw, &store.Config{NoFastPaths: f.StoreNoFastPaths})
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// checkLease refuses a lease the runtime cannot work with.
func checkLease(d time.Duration) error {
	if d < 3*time.Second {
		return fmt.Errorf("%w: --lease must be at least 3s, got %v", errUsage, d)
	}
	return nil
}

// chatWorkersPerWorker is the default of --chat-workers per --workers: a
// chat job (a turn, a decision) waits on the model most of its time, so a
// process works more of them at once than runs. With 2 (the chat's old
// default) the 8 conversations of `waymark bench` queued behind two jobs:
// 106 card answers/s, and 187 with 8.
const chatWorkersPerWorker = 4

// queueWorkers checks --workers against the least the command needs (serve
// and mcp: 0, leaving runs to worker processes; worker: 1) and resolves
// --chat-workers against it — the same check on every command, before
// anything is opened or written.
func queueWorkers(f *flags, least int) (workers, chats int, err error) {
	switch {
	case f.Workers < least:
		return 0, 0, fmt.Errorf("%w: --workers must be %d or more", errUsage, least)
	case f.ChatWorkers < 0:
		return 0, 0, fmt.Errorf("%w: --chat-workers must be 0 or more", errUsage)
	case f.ChatWorkers == 0:
		return f.Workers, chatWorkersPerWorker * f.Workers, nil
	case f.Workers == 0:
		return 0, 0, fmt.Errorf("%w: --chat-workers needs --workers above 0", errUsage)
	}
	return f.Workers, f.ChatWorkers, nil
}
