package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"waymark/internal/agent"
	"waymark/internal/store"
)

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("waymark "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	return fs
}

// dbFlag defines --db with the default from WAYMARK_DB.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", cmp.Or(os.Getenv("WAYMARK_DB"), store.DefaultURL), "database: sqlite:PATH or postgres://…")
}

// maxOpenRunsFlag defines --max-open-runs with the default from
// WAYMARK_MAX_OPEN_RUNS (issue 12 item 2).
func maxOpenRunsFlag(fs *flag.FlagSet) *int {
	def := agent.DefaultMaxOpenRuns
	if v, err := strconv.Atoi(os.Getenv("WAYMARK_MAX_OPEN_RUNS")); err == nil {
		def = v
	}
	return fs.Int("max-open-runs", def, "runs one user may have queued or waiting for a decision at once (env WAYMARK_MAX_OPEN_RUNS)")
}

// skillsRootFlag defines --skills-root with the default from WAYMARK_SKILLS_ROOT.
func skillsRootFlag(fs *flag.FlagSet) *string {
	return fs.String("skills-root", os.Getenv("WAYMARK_SKILLS_ROOT"), "folder every directory skill source must lie in (none: directory sources are refused)")
}

// parse parses args and turns flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return fmt.Errorf("%w: %s", errUsage, strings.TrimSpace(err.Error()))
	}
	return nil
}

// openDB opens and migrates the database named by --db.
func openDB(ctx context.Context, raw string) (*store.DB, error) {
	if _, err := store.ParseURL(raw); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	db, err := store.Open(ctx, raw)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// leaseFlag defines --lease: how long a worker holds a run between renewals
// (default from WAYMARK_LEASE, else agent.DefaultLease).
func leaseFlag(fs *flag.FlagSet) *time.Duration {
	def := agent.DefaultLease
	if d, err := time.ParseDuration(os.Getenv("WAYMARK_LEASE")); err == nil {
		def = d
	}
	return fs.Duration("lease", def, "run lease, renewed while a run waits on the model or a tool; a crashed process's runs are reaped about a lease later")
}

// checkLease refuses a lease the runtime cannot work with.
func checkLease(d time.Duration) error {
	if d < 3*time.Second {
		return fmt.Errorf("%w: --lease must be at least 3s, got %v", errUsage, d)
	}
	return nil
}
