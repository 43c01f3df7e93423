package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"waymark/internal/access"
	"waymark/internal/auth"
	"waymark/internal/fixture"
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
	fmt.Fprintf(e.stdout, "migrations current on %s\n", db.Addr)
	return nil
}

func cmdImport(ctx context.Context, e *env, args []string) error {
	fs := newFlags("import", e.stderr)
	dbURL := dbFlag(fs)
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
	sum, err := fixture.ImportFiles(ctx, db, fs.Args()...)
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
	tok, err := auth.IssueToken(ctx, db, u.UID, *label, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, tok)
	return nil
}

// notYet is the answer of the commands whose runtime has not landed yet.
func notYet(name string) func(ctx context.Context, e *env, args []string) error {
	return func(ctx context.Context, e *env, args []string) error {
		fs := newFlags(name, e.stderr)
		dbFlag(fs)
		fs.Int("workers", 2, "number of workers")
		fs.Duration("older-than", 720*time.Hour, "retention window")
		if err := parse(fs, args); err != nil {
			return err
		}
		return fmt.Errorf("not yet available: the agent runtime has not landed")
	}
}

var (
	cmdPurge  = notYet("purge")
	cmdReap   = notYet("reap")
	cmdWorker = notYet("worker")
)
