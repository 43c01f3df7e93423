package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"waymark/internal/bench"
)

const benchArgs = "[--db URL] [--worker-processes N] [--conversations N] [--duration 20s]"

// benchExe and benchEnv let tests run the children from the test binary.
var (
	benchExe string
	benchEnv []string
)

// cmdBench is `waymark bench` (issue 15 item 5): one `name: value unit` line per figure.
func cmdBench(ctx context.Context, e *env, args []string) error {
	fs := newFlags("bench", e.stderr)
	db := fs.String("db", os.Getenv("WAYMARK_BENCH_DB"), "database to run on: sqlite:PATH or postgres://… (default: a new temporary SQLite file; env WAYMARK_BENCH_DB)")
	procs := fs.Int("worker-processes", 0, "`waymark worker` processes to start (0: workers inside the server; SQLite allows 1)")
	convs := fs.Int("conversations", 8, "guided conversations at once, one editor and page each")
	dur := fs.Duration("duration", 20*time.Second, "how long new tours are started")
	dir := fs.String("data-dir", "", "folder of the secret key for --db (default: WAYMARK_DATA_DIR, the SQLite file's folder, or .; WAYMARK_SECRET_KEY first)")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the server child to `FILE` (go tool pprof)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	keyDir := ""
	if *db != "" { // a database of the operator's: its key, as serve finds it
		keyDir = dataDir(*dir, *db)
	}
	figures, err := bench.Run(ctx, bench.Config{DB: *db, DataDir: keyDir, WorkerProcesses: *procs, Conversations: *convs, Duration: *dur, CPUProfile: *profile,
		Exe: benchExe, Env: benchEnv, Log: e.log})
	if errors.As(err, new(bench.ConfigError)) {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if err != nil {
		return err
	}
	for _, f := range figures {
		fmt.Fprintln(e.stdout, f)
	}
	return nil
}
