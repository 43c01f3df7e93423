package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"waymark/internal/access"
	"waymark/internal/app"
	"waymark/internal/auth"
	"waymark/internal/fixture"
	"waymark/internal/typo3/live"
)

func cmdImport(ctx context.Context, e *env, args []string) error {
	f := newFlags("import", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	if len(f.Args()) == 0 {
		return fmt.Errorf("%w: no fixture file given", errUsage)
	}
	in, err := f.openInstallation(ctx)
	if err != nil {
		return err
	}
	defer in.Close()
	a, err := app.New(ctx, in.DB, f.appConfig(e, in))
	if err != nil {
		return err
	}
	sum, err := fixture.ImportFiles(ctx, in.DB, a.FixtureOptions(), f.Args()...)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "imported %s\n", sum)
	return nil
}

func cmdToken(ctx context.Context, e *env, args []string) error {
	f := newFlags("token", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	if len(f.Args()) != 1 {
		return fmt.Errorf("%w: want exactly one USERNAME", errUsage)
	}
	// Beside TYPO3 the user is TYPO3's: a TYPO3 editor gets a token (for
	// an MCP client, say) without logging in to Waymark first.
	in, err := f.openInstallation(ctx)
	if err != nil {
		return err
	}
	defer in.Close()
	db := in.DB
	u, err := in.Directory.LoadUserByName(ctx, db, f.Args()[0])
	if errors.Is(err, access.ErrNoUser) {
		return fmt.Errorf("no user %q", f.Args()[0])
	}
	if err != nil {
		return err
	}
	if u.Disabled {
		return fmt.Errorf("user %q is disabled", u.Username)
	}
	if in.TYPO3 != nil {
		// The token names Waymark's row of the TYPO3 user, as a login's session does.
		if err := live.KeepUser(ctx, db, u.UID, u.Username); err != nil {
			return err
		}
	}
	tok, err := auth.IssueToken(ctx, db, u.UID, f.Label, time.Now(), auth.DefaultCost)
	if err != nil {
		return err
	}
	if u.PasswordMark != "" { // a password changed in TYPO3 ends the token
		if err := auth.MarkToken(ctx, db, tok, u.PasswordMark); err != nil {
			return err
		}
	}
	fmt.Fprintln(e.stdout, tok)
	return nil
}

func cmdWorker(ctx context.Context, e *env, args []string) error {
	f := newFlags("worker", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	e.log.Debug("options", "options", f) // secrets as [set] (flags.LogValue)
	if err := checkShutdown(f.ShutdownTimeout); err != nil {
		return err
	}
	workers, chats, err := queueWorkers(f, 1)
	if err != nil {
		return err
	}
	if err := checkLease(f.Lease); err != nil {
		return err
	}
	if err := f.checkRetention(); err != nil {
		return err
	}
	traces, stopObserving, err := startObserving(ctx, e, f.CPUProfile)
	if err != nil {
		return err
	}
	defer stopObserving()
	in, err := f.openInstallation(ctx)
	if err != nil {
		return err
	}
	defer in.Close()
	db := in.DB
	cfg := f.appConfig(e, in)
	cfg.Workers, cfg.ChatWorkers, cfg.Lease, cfg.ModelStream, cfg.Tracer = workers, chats, f.Lease, f.ModelStream, traces.Tracer()
	a, err := app.New(ctx, db, cfg)
	if err != nil {
		return err
	}
	stopPurges, err := f.schedulePurges(ctx, e, db)
	if err != nil {
		return err
	}
	defer stopPurges()
	err = a.Run(ctx, app.RunConfig{ShutdownTimeout: f.ShutdownTimeout, Started: func() {
		e.log.Info("waymark worker running", "db", db.Addr, "workers", f.Workers)
	}})
	e.log.Info("worker stopped", "commits", db.Commits(), "statements", db.Statements()) // read by waymark bench
	return err
}

func cmdPurge(ctx context.Context, e *env, args []string) error {
	f := newFlags("purge", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.checkRetention(); err != nil {
		return err
	}
	db, err := f.openDB(ctx, f.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	p, err := f.purger(db, e)
	if err != nil {
		return err
	}
	r, err := p.Purge(ctx)
	if err != nil {
		return err
	}
	if r.Skipped {
		fmt.Fprintln(e.stdout, "another process is purging this database at this moment (a scheduled purge); this one deleted nothing")
		return nil
	}
	fmt.Fprintf(e.stdout, "purged %d runs and %d expired sessions\n", r.Runs, r.Sessions)
	return nil
}

func cmdReap(ctx context.Context, e *env, args []string) error {
	f := newFlags("reap", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	in, err := f.openInstallation(ctx)
	if err != nil {
		return err
	}
	defer in.Close()
	a, err := app.New(ctx, in.DB, f.appConfig(e, in))
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
