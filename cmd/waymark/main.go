// Command waymark is the one binary of Waymark: the API and UI server, queue
// workers, fixture import, migrations, retention and the offline demo
// (API.md §1). Every subcommand exits non-zero with a one-line reason on bad
// input.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runCLI(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one subcommand.
type command struct {
	name, args, help string
	run              func(ctx context.Context, e *env, args []string) error
}

// env is what every subcommand gets: its output streams and logger.
type env struct {
	stdout, stderr io.Writer
	log            *slog.Logger
}

func commands() []command {
	return []command{
		{"demo", "[--addr 127.0.0.1:8080] [--db URL]", "import the demo site and serve it with the offline demo model", cmdDemo},
		{"serve", "[--addr] [--db URL] [--workers N] [--lease D]", "serve the API and UI (and, by default, in-process workers)", cmdServe},
		{"worker", "[--db URL] [--workers N] [--lease D]", "run queue workers only", cmdWorker},
		{"import", "[--db URL] FILE...", "import fixtures (JSON or YAML), idempotent by uid", cmdImport},
		{"migrate", migrateArgs, "apply database migrations; --to VERSION rolls back or forward, --status lists them", cmdMigrate},
		{"backup", backupArgs, "write a consistent copy of a running SQLite installation and its secret key to one archive", cmdBackup},
		{"restore", restoreArgs, "restore a backup archive into a new, empty location", cmdRestore},
		{"purge", "[--db URL] [--older-than 720h]", "delete finished runs and their events past retention", cmdPurge},
		{"reap", "[--db URL]", "requeue or dead-letter runs whose lease expired", cmdReap},
		{"token", "[--db URL] [--typo3 DSN --typo3-sites DIR] USERNAME", "print a new API token for a user (beside TYPO3: a TYPO3 user)", cmdToken},
		{"user", "disable|enable [--db URL] USERNAME", "disable a user (sessions end, tokens refused) or enable again (beside TYPO3: refused, TYPO3 administers its users)", cmdUser},
		{"version", "", "print the module version, commit and Go version", cmdVersion},
		{"bench", benchArgs, "drive guided tours through the API on a scratch fixture and print the figures", cmdBench},
		{"skill", skillArgs, "skills: sync a directory source, list, approve or revoke a version", cmdSkill},
		{"mcp", "[--db URL] [--workers N]", "serve the MCP tools over stdio to a local client, as the user of WAYMARK_TOKEN", cmdMCP},
		{"typo3", typo3Args, "beside TYPO3: check an installation (changes nothing) or create the demo TYPO3 database", cmdTYPO3},
	}
}

// errUsage marks an error caused by the command line; it exits with 2.
var errUsage = errors.New("usage")

func runCLI(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, log: newLogger(stderr)}
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "-v" {
		args = append([]string{"version"}, args[1:]...)
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 { // waymark help CMD is waymark CMD -h
			return runCLI(ctx, []string{args[1], "-h"}, stdout, stderr)
		}
		usage(stdout)
		helpFlags(ctx, stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		rest := args[1:]
		if len(rest) == 1 && (rest[0] == "-h" || rest[0] == "--help" || rest[0] == "-help") {
			rest = helpArgs(c.name)
		}
		err := c.run(ctx, e, rest)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "waymark %s: %v\nusage: waymark %s %s\n", c.name, err, c.name, c.args)
			return 2
		default:
			fmt.Fprintf(stderr, "waymark %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "waymark: unknown command %q (try waymark help)\n", args[0])
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: waymark COMMAND [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-8s %s", c.name, c.args), " "))
		fmt.Fprintf(w, "             %s\n", c.help)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "--db takes sqlite:PATH (default sqlite:waymark.db) or a postgres:// URL in every command (bench: its own, never WAYMARK_DB).")
	fmt.Fprintln(w, "Every flag is also read from the environment variable its help names: --max-open-runs from WAYMARK_MAX_OPEN_RUNS,")
	fmt.Fprintln(w, "bench's from WAYMARK_BENCH_ and the flag's name (--db from WAYMARK_BENCH_DB); the command line wins.")
	fmt.Fprintln(w, "waymark --version (-v) is waymark version.")
}

// helpArgs is the -h of a command; of one with subcommands, that of the
// subcommand with every flag.
func helpArgs(name string) []string {
	switch name {
	case "user":
		return []string{"disable", "-h"}
	case "skill":
		return []string{"approve", "-h"}
	}
	return []string{"-h"}
}

// helpFlags prints every command's flags, each with its environment
// variable and default, by asking each command for -h.
func helpFlags(ctx context.Context, w io.Writer) {
	for _, c := range commands() {
		if c.name == "version" {
			continue
		}
		fmt.Fprintln(w)
		_ = c.run(ctx, &env{stdout: io.Discard, stderr: w, log: slog.New(slog.NewTextHandler(io.Discard, nil))}, helpArgs(c.name))
	}
}

// newLogger logs JSON, one record a line, on a terminal too: what an
// operator reads is what a collector parses.
func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: logLevel}))
}
