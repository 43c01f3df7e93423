package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"waymark/internal/access"
	"waymark/internal/app"
	"waymark/internal/auth"
	"waymark/internal/clock"
	"waymark/internal/fixture"
	"waymark/internal/queue"
	"waymark/internal/run"
)

func cmdMigrate(ctx context.Context, e *env, args []string) error {
	fs := newFlags("migrate", e.stderr)
	dbURL := dbFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	db, err := openDB(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	q, err := queue.New(db, queue.Config{})
	if err != nil {
		return err
	}
	if err := q.Migrate(ctx); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "migrations current on %s\n", db.Addr)
	return nil
}

func cmdImport(ctx context.Context, e *env, args []string) error {
	fs := newFlags("import", e.stderr)
	dbURL := dbFlag(fs)
	dir := fs.String("data-dir", "", "folder of the secret key that seals provider keys")
	skillsRoot := skillsRootFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: no fixture file given", errUsage)
	}
	db, err := openDB(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	a, err := app.New(ctx, db, app.Config{DataDir: dataDir(*dir, *dbURL), SkillsRoot: *skillsRoot, Workers: 0, Logger: e.log, Version: version})
	if err != nil {
		return err
	}
	sum, err := fixture.ImportFiles(ctx, db, a.FixtureOptions(), fs.Args()...)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "imported %s\n", sum)
	return nil
}

func cmdToken(ctx context.Context, e *env, args []string) error {
	fs := newFlags("token", e.stderr)
	dbURL := dbFlag(fs)
	label := fs.String("label", "cli", "a label stored with the token")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: want exactly one USERNAME", errUsage)
	}
	db, err := openDB(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	u, err := access.LoadUserByName(ctx, db, fs.Arg(0))
	if errors.Is(err, access.ErrNoUser) {
		return fmt.Errorf("no user %q", fs.Arg(0))
	}
	if err != nil {
		return err
	}
	if u.Disabled {
		return fmt.Errorf("user %q is disabled", u.Username)
	}
	tok, err := auth.IssueToken(ctx, db, u.UID, *label, time.Now(), auth.DefaultCost)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, tok)
	return nil
}

func cmdWorker(ctx context.Context, e *env, args []string) error {
	fs := newFlags("worker", e.stderr)
	dbURL := dbFlag(fs)
	workers := fs.Int("workers", 2, "concurrent runs")
	chatFlag := chatWorkersFlag(fs)
	dir := fs.String("data-dir", "", "folder of the secret key")
	skillsRoot := skillsRootFlag(fs)
	lease := leaseFlag(fs)
	modelStream := modelStreamFlag(fs)
	profile := cpuProfileFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *workers < 1 {
		return fmt.Errorf("%w: --workers must be 1 or more", errUsage)
	}
	chats, err := chatWorkers(*chatFlag, *workers)
	if err != nil {
		return err
	}
	if err := checkLease(*lease); err != nil {
		return err
	}
	traces, stopObserving, err := startObserving(ctx, e, *profile)
	if err != nil {
		return err
	}
	defer stopObserving()
	db, err := openDB(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	a, err := app.New(ctx, db, app.Config{DataDir: dataDir(*dir, *dbURL), SkillsRoot: *skillsRoot, Workers: *workers, ChatWorkers: chats,
		Lease: *lease, ModelStream: *modelStream, Logger: e.log, Version: version, Tracer: traces.Tracer()})
	if err != nil {
		return err
	}
	stop, err := a.StartWorkers(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "waymark worker on %s: %d workers\n", db.Addr, *workers)
	<-ctx.Done()
	stop()
	e.log.Info("worker stopped", "commits", db.Commits(), "statements", db.Statements()) // read by waymark bench
	return nil
}

func cmdPurge(ctx context.Context, e *env, args []string) error {
	fs := newFlags("purge", e.stderr)
	dbURL := dbFlag(fs)
	older := fs.Duration("older-than", 720*time.Hour, "delete finished runs (and their events) finished longer ago")
	waiting := fs.Duration("waiting-older-than", 2160*time.Hour, "delete runs waiting for a decision untouched this long")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *older <= 0 || *waiting <= 0 {
		return fmt.Errorf("%w: retention windows must be positive", errUsage)
	}
	db, err := openDB(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	now := time.Now()
	n, err := run.NewStore(db, clock.Real{}).Purge(ctx, now.Add(-*older), now.Add(-*waiting))
	if err != nil {
		return err
	}
	sessions, err := auth.New(db, clock.Real{}).PurgeSessions(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "purged %d runs and %d expired sessions\n", n, sessions)
	return nil
}

func cmdReap(ctx context.Context, e *env, args []string) error {
	fs := newFlags("reap", e.stderr)
	dbURL := dbFlag(fs)
	dir := fs.String("data-dir", "", "folder of the secret key")
	skillsRoot := skillsRootFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	db, err := openDB(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	a, err := app.New(ctx, db, app.Config{DataDir: dataDir(*dir, *dbURL), SkillsRoot: *skillsRoot, Workers: 0, Logger: e.log, Version: version})
	if err != nil {
		return err
	}
	rep, err := a.Runtime.Reap(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "requeued %d, dead-lettered %d, restarted %d\n", rep.Requeued, rep.DeadLettered, rep.Restarted)
	return nil
}
