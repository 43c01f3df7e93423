package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Config tunes a run.
type Config struct {
	// DB is the database (sqlite:PATH or postgres://…); "" is a new
	// temporary SQLite file. It must be empty or made by an earlier bench
	// (claim): any other is refused with *NotBenchDBError, unchanged.
	DB string
	// ChildDB, if set, is the URL the server and worker children connect
	// with instead of DB — the same database reached another way (through a
	// proxy that the outage proof cuts), while this process keeps DB.
	ChildDB string
	// WorkerProcesses is how many `waymark worker` processes run the queue;
	// 0 runs the workers inside the server. On SQLite at most 1.
	WorkerProcesses int
	// Conversations is how many guided conversations run at once (1 or more).
	Conversations int
	// Duration is how long new tours are started (positive).
	Duration time.Duration
	// DataDir, if set, holds the secret key file (secret.key) of DB; by
	// default the run's key is a new one, kept in the database the bench
	// makes (markerTable) for a later run to reuse.
	DataDir string
	// Exe is the waymark binary the children run (default: this executable);
	// Env is added to their environment.
	Exe string
	Env []string
	// CPUProfile, if set, is the file the server child writes its CPU
	// profile to (serve --cpuprofile).
	CPUProfile string
	Log        *slog.Logger
	// Lease is the server's and the workers' --lease (0: their default).
	Lease time.Duration
	// APIProcesses is how many `waymark serve` processes take the API
	// (0: one). With more, Cluster.URL is a balancer in front of them that
	// skips a server while it restarts (the rolling-restart proof).
	APIProcesses int
	// ShutdownTimeout is the children's --shutdown-timeout (0: their default).
	ShutdownTimeout time.Duration
	// TYPO3, if set, is the DSN of an empty TYPO3 database: the bench
	// creates its site there as TYPO3 rows and runs the server and workers
	// beside it (--typo3); TYPO3Sites is where it writes the site
	// configuration (an empty or new folder; default a temporary one).
	TYPO3, TYPO3Sites string
}

// Figure is one measured value, printed as "name: value unit".
type Figure struct {
	Name  string
	Value float64
	Unit  string
}

func (f Figure) String() string {
	if f.Unit == "" {
		return fmt.Sprintf("%s: %.2f", f.Name, f.Value)
	}
	return fmt.Sprintf("%s: %.2f %s", f.Name, f.Value, f.Unit)
}

// ConfigError is a refused configuration: nothing was started.
type ConfigError string

func (e ConfigError) Error() string { return string(e) }

// ErrSQLiteWorkers is returned when more than one worker process is asked
// for on SQLite, which has one writer.
const ErrSQLiteWorkers = ConfigError("--worker-processes: SQLite allows only 1 worker process (one writer at a time); use --db postgres://… for more")

func (c *Config) validate() error {
	switch {
	case c.Conversations < 1:
		return ConfigError("--conversations must be 1 or more")
	case c.Duration <= 0:
		return ConfigError("--duration must be positive")
	case c.WorkerProcesses < 0:
		return ConfigError("--worker-processes must be 0 or more")
	case c.APIProcesses < 0:
		return ConfigError("APIProcesses must be 0 or more")
	case c.TYPO3 != "" && c.DB != "":
		return ConfigError("--typo3: Waymark's own database is a new temporary SQLite file beside TYPO3; leave out --db")
	case c.TYPO3 == "" && c.TYPO3Sites != "":
		return ConfigError("--typo3-sites needs --typo3")
	}
	return nil
}

// Run runs the benchmark and returns its figures in print order.
func Run(ctx context.Context, cfg Config) ([]Figure, error) {
	c, err := Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	baseline, err := commitRate(ctx, c.DB, cfg.Conversations, min(2*time.Second, max(cfg.Duration/10, 300*time.Millisecond)))
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	before, err := serverCounts(ctx, c.Client, c.URL)
	if err != nil {
		return nil, err
	}
	cpu0, err := cpuTime(c.ServerPID())
	if err != nil {
		return nil, err
	}
	res := c.Drive(ctx, cfg.Duration, Mix{})
	cpu1, err := cpuTime(c.ServerPID())
	if err != nil {
		return nil, err
	}
	after, err := serverCounts(ctx, c.Client, c.URL)
	if err != nil {
		return nil, err
	}
	rss, err := c.ServerPeakRSS()
	if err != nil {
		return nil, err
	}
	workers, err := c.WorkerCounts()
	if err != nil {
		return nil, err
	}
	n := after.minus(before)
	n.commits += workers.commits
	n.statements += workers.statements
	if res.Err != nil {
		return nil, fmt.Errorf("%d of the tours failed; the first: %w", res.Failed, res.Err)
	}
	if res.Answers == 0 {
		return nil, errors.New("no card was answered")
	}
	secs := res.Elapsed.Seconds()
	return []Figure{
		{"tours/s", float64(res.Tours) / secs, "1/s"},
		{"card_answers/s", float64(res.Answers) / secs, "1/s"},
		{"answer_latency_p50", ms(quantile(res.Latencies, 0.50)), "ms"},
		{"answer_latency_p99", ms(quantile(res.Latencies, 0.99)), "ms"},
		{"db_transactions/answer", float64(n.commits) / float64(res.Answers), ""},
		{"db_statements/answer", float64(n.statements) / float64(res.Answers), ""},
		{"server_cpu/answer", ms(cpu1-cpu0) / float64(res.Answers), "ms"},
		{"server_peak_rss", float64(rss) / 1024, "MB"},
		{"baseline_commits/s", baseline, "1/s"},
		{"unfinished_tours", float64(res.Unfinished), ""},
	}, nil
}

// tail is the end of a child's output, for error messages.
func tail(b *bytes.Buffer) string {
	s := b.Bytes()
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return string(bytes.TrimSpace(s))
}

var _ io.Writer = (*bytes.Buffer)(nil)
