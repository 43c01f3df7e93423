package bench

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"waymark/internal/app"
	"waymark/internal/fixture"
	"waymark/internal/llm/llmtest"
	"waymark/internal/secret"
	"waymark/internal/store"
)

// Config tunes a run.
type Config struct {
	// DB is the database (sqlite:PATH or postgres://…); "" is a new
	// temporary SQLite file.
	DB string
	// WorkerProcesses is how many `waymark worker` processes run the queue;
	// 0 runs the workers inside the server. On SQLite at most 1.
	WorkerProcesses int
	// Conversations is how many guided conversations run at once (1 or more).
	Conversations int
	// Duration is how long new tours are started (positive).
	Duration time.Duration
	// DataDir holds the secret key (secret.LoadKey, WAYMARK_SECRET_KEY
	// first) for the server, the workers and the import; "" is the run's
	// temporary folder, right for a temporary database only.
	DataDir string
	// Exe is the waymark binary the children run (default: this executable);
	// Env is added to their environment.
	Exe string
	Env []string
	// CPUProfile, if set, is the file the server child writes its CPU
	// profile to (serve --cpuprofile).
	CPUProfile string
	Log        *slog.Logger
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
	}
	return nil
}

// Run runs the benchmark and returns its figures in print order.
func Run(ctx context.Context, cfg Config) ([]Figure, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	tmp, err := os.MkdirTemp("", "waymark-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	dbURL := cmp.Or(cfg.DB, "sqlite:"+filepath.Join(tmp, "bench.db"))
	target, err := store.ParseURL(dbURL)
	if err != nil {
		return nil, ConfigError(err.Error())
	}
	if target.Dialect == store.SQLite && cfg.WorkerProcesses > 1 {
		return nil, ErrSQLiteWorkers
	}
	exe := cfg.Exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find the waymark binary: %w", err)
		}
	}

	// The model: zero latency, in this process.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("model server: %w", err)
	}
	model := &http.Server{Handler: llmtest.Handler(reply), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = model.Serve(ln) }()
	defer model.Close()

	// The database, the fixture and the baseline, from this process.
	keyDir := cmp.Or(cfg.DataDir, tmp)
	key, err := secret.LoadKey(keyDir, os.Getenv(secret.EnvKey))
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return nil, err
	}
	a, err := app.New(ctx, db, app.Config{Key: key, Workers: 0, Logger: log})
	if err != nil {
		return nil, err
	}
	text := site(cfg.Conversations, "http://"+ln.Addr().String()+"/v1")
	if _, err := fixture.Import(ctx, db, []byte(text), "bench.yaml", a.FixtureOptions()); err != nil {
		return nil, fmt.Errorf("bench fixture: %w", err)
	}
	a.Close()
	baseline, err := commitRate(ctx, db, cfg.Conversations, min(2*time.Second, max(cfg.Duration/10, 300*time.Millisecond)))
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}

	// The server and the workers, as children of the same binary.
	env := append(os.Environ(), cfg.Env...)
	inProcess := 2
	if cfg.WorkerProcesses > 0 {
		inProcess = 0
	}
	serveArgs := []string{"serve", "--db", dbURL, "--addr", "127.0.0.1:0", "--workers", fmt.Sprint(inProcess), "--data-dir", keyDir}
	if cfg.CPUProfile != "" {
		serveArgs = append(serveArgs, "--cpuprofile", cfg.CPUProfile)
	}
	server, err := startChild(ctx, exe, env, serveArgs...)
	if err != nil {
		return nil, err
	}
	defer server.stop()
	var workers []*child
	for range cfg.WorkerProcesses {
		w, err := startChild(ctx, exe, env, "worker", "--db", dbURL, "--data-dir", keyDir)
		if err != nil {
			return nil, err
		}
		defer w.stop()
		workers = append(workers, w)
	}

	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * cfg.Conversations}}
	before, err := serverCounts(ctx, client, server.url)
	if err != nil {
		return nil, err
	}
	cpu0, err := cpuTime(server.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	res := drive(ctx, client, server.url, cfg.Conversations, cfg.Duration)
	cpu1, err := cpuTime(server.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	after, err := serverCounts(ctx, client, server.url)
	if err != nil {
		return nil, err
	}
	rss, err := peakRSS(server.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	n := after.minus(before)
	for _, w := range workers {
		wn, err := w.stopAndCount()
		if err != nil {
			return nil, err
		}
		n.commits += wn.commits
		n.statements += wn.statements
	}
	if res.err != nil {
		return nil, fmt.Errorf("%d of the tours failed; the first: %w", res.failed, res.err)
	}
	if res.answers == 0 {
		return nil, errors.New("no card was answered")
	}
	secs := res.elapsed.Seconds()
	return []Figure{
		{"tours/s", float64(res.tours) / secs, "1/s"},
		{"card_answers/s", float64(res.answers) / secs, "1/s"},
		{"answer_latency_p50", ms(quantile(res.latencies, 0.50)), "ms"},
		{"answer_latency_p99", ms(quantile(res.latencies, 0.99)), "ms"},
		{"db_transactions/answer", float64(n.commits) / float64(res.answers), ""},
		{"db_statements/answer", float64(n.statements) / float64(res.answers), ""},
		{"server_cpu/answer", ms(cpu1-cpu0) / float64(res.answers), "ms"},
		{"server_peak_rss", float64(rss) / 1024, "MB"},
		{"baseline_commits/s", baseline, "1/s"},
		{"unfinished_tours", float64(res.unfinished), ""},
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
