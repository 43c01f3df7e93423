package main

import (
	"context"
	"errors"
	"fmt"

	"waymark/internal/bench"
	"waymark/internal/typo3"
)

const benchArgs = "[--db URL] [--worker-processes N] [--conversations N] [--duration 20s] [--typo3 DSN [--typo3-sites DIR]]"

// benchExe and benchEnv let tests run the children from the test binary.
var (
	benchExe string
	benchEnv []string
)

// cmdBench is `waymark bench`: one `name: value unit` line
// per figure. It never reads the installation's WAYMARK_DB, WAYMARK_TYPO3 or
// WAYMARK_DATA_DIR: its options have variables of their own
// (WAYMARK_BENCH_DB, …), and bench.Start refuses a database it did not make.
// With --typo3 it runs twice on the same machine, on the built-in source
// and beside TYPO3, and prints the figures side by side with the ratio of
// card answers/s.
func cmdBench(ctx context.Context, e *env, args []string) error {
	f := newFlags("bench", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	if len(f.Args()) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, f.Args()[0])
	}
	keyDir := ""
	if f.DB != "" { // a database of an earlier bench: its key beside it or in --data-dir
		keyDir = dataDir(f.DataDir, f.DB)
	}
	cfg := bench.Config{DB: f.DB, DataDir: keyDir, WorkerProcesses: f.WorkerProcesses, Conversations: f.Conversations,
		Duration: f.Duration, CPUProfile: f.CPUProfile, Exe: benchExe, Env: benchEnv, Log: e.log}
	if f.TYPO3 == "" && f.TYPO3Sites == "" {
		figures, err := runBench(ctx, cfg)
		if err != nil {
			return err
		}
		for _, f := range figures {
			fmt.Fprintln(e.stdout, f)
		}
		return nil
	}
	// Beside TYPO3: the TYPO3 run first, so that a refused TYPO3 database
	// or sites folder costs no built-in run.
	t3 := cfg
	t3.TYPO3, t3.TYPO3Sites = f.TYPO3, f.TYPO3Sites
	typo3Figures, err := runBench(ctx, t3)
	if err != nil {
		return err
	}
	builtin, err := runBench(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%-24s %12s %12s\n", "figure", "built-in", "typo3")
	var ratio float64
	for i, b := range builtin {
		t := typo3Figures[i]
		fmt.Fprintf(e.stdout, "%-24s %12.2f %12.2f %s\n", b.Name, b.Value, t.Value, b.Unit)
		if b.Name == "card_answers/s" && b.Value > 0 {
			ratio = t.Value / b.Value
		}
	}
	fmt.Fprintf(e.stdout, "typo3/built-in card_answers/s: %.2f\n", ratio)
	return nil
}

// runBench is bench.Run with a refused configuration as a usage error.
func runBench(ctx context.Context, cfg bench.Config) ([]bench.Figure, error) {
	figures, err := bench.Run(ctx, cfg)
	if errors.As(err, new(bench.ConfigError)) || errors.Is(err, typo3.ErrBadDSN) {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	return figures, err
}
