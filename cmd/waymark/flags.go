package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"waymark/internal/agent"
	"waymark/internal/store"
)

// newFlags returns a flag set that reports errors instead of exiting. Every
// flag of it is also settable from the environment as WAYMARK_ and its name
// in capitals with "-" as "_" (envName); parse applies those to the flags
// the command line leaves unset, so a flag is defined once, in one line. Every set has
// --log-level.
func newFlags(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("waymark "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Func("log-level", "log level: debug, info, warn or error (default info)", func(v string) error {
		var l slog.Level
		if err := l.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("want debug, info, warn or error")
		}
		logLevel.Set(l)
		return nil
	})
	return fs
}

// logLevel is the level of every logger of the process (--log-level).
var logLevel = new(slog.LevelVar)

// envName is the environment variable of flag name.
func envName(name string) string {
	return "WAYMARK_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// applyEnv sets every flag of fs not on the command line whose environment
// variable is set.
func applyEnv(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		v, ok := os.LookupEnv(envName(f.Name))
		if !ok || v == "" || err != nil || given[f.Name] { // empty is unset, as before
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("%w: %s=%q: %v", errUsage, envName(f.Name), v, e)
		}
	})
	return err
}

// printFlags writes every flag of fs with its environment variable and default.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s %s\n      %s\n      env %s", f.Name, typ, usage, envName(f.Name))
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" || typ == "int" {
			fmt.Fprintf(w, ", default %q", f.DefValue)
		}
		fmt.Fprintln(w)
	})
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

// parse applies the environment, then parses args, and turns flag errors
// into usage errors. -h prints every flag with its environment variable and
// default to the flag set's output.
func parse(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintf(out, "usage: %s [flags]\n", fs.Name())
			printFlags(out, fs)
			return err
		}
		return fmt.Errorf("%w: %s", errUsage, strings.TrimSpace(err.Error()))
	}
	return applyEnv(fs)
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

// modelStreamFlag defines --model-stream (app.Config.ModelStream).
func modelStreamFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("model-stream", false, "ask the model for streamed replies, for a gateway that closes connections silent while a long reply is generated (a reply is used once complete either way)")
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
// 106 card answers/s, and 187 with 8 (issue 15).
const chatWorkersPerWorker = 4

// chatWorkersFlag defines --chat-workers; resolve it with chatWorkers.
func chatWorkersFlag(fs *flag.FlagSet) *int {
	return fs.Int("chat-workers", 0, fmt.Sprintf("chat jobs (turns, decisions) worked at once; they wait on the model most of the time (0: %d × --workers)", chatWorkersPerWorker))
}

// chatWorkers resolves --chat-workers against --workers.
func chatWorkers(flagValue, workers int) (int, error) {
	switch {
	case flagValue < 0:
		return 0, fmt.Errorf("%w: --chat-workers must be 0 or more", errUsage)
	case flagValue == 0:
		return chatWorkersPerWorker * workers, nil
	case workers == 0:
		return 0, fmt.Errorf("%w: --chat-workers needs --workers above 0", errUsage)
	}
	return flagValue, nil
}
