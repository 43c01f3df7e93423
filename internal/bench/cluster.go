package bench

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"waymark/internal/app"
	"waymark/internal/auth"
	"waymark/internal/fixture"
	"waymark/internal/llm/llmtest"
	"waymark/internal/secret"
	"waymark/internal/store"
	"waymark/internal/typo3"
	"waymark/internal/typo3/live"
)

// Cluster is a Waymark installation started for a run of the bench or of
// the load and crash proofs: a zero-latency scripted
// model in this process, a database holding the generated fixture (one
// editor and page per conversation), a `waymark serve` child and
// Config.WorkerProcesses `waymark worker` children on that database.
type Cluster struct {
	// DB is the cluster's database, opened by this process.
	DB *store.DB
	// URL is the server's base URL.
	URL string
	// Client is the HTTP client the conversations share.
	Client *http.Client

	cfg        Config
	tmp        string
	exe        string
	env        []string
	dbURL      string
	childDB    string   // the URL the children connect with (Config.ChildDB, default dbURL)
	tokens     []string // the editors' API tokens, new in every run
	model      *http.Server
	serveArgs  []string
	workerArgs []string  // the workers' --typo3-sites
	front      *balancer // in front of the servers when there are several; nil with one
	t3         *sql.DB   // the TYPO3 database (Config.TYPO3); nil without

	mu      sync.Mutex // guards servers, workers and gone
	servers []*child   // the API processes (Config.APIProcesses)
	workers []*child
	gone    []*child // processes stopped and replaced, kept for LogLines
}

// Start starts a cluster for cfg; Close stops it. On an error nothing is
// left running.
func Start(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	log := cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	if c.tmp, err = os.MkdirTemp("", "waymark-bench-"); err != nil {
		return nil, err
	}
	c.dbURL = cmp.Or(cfg.DB, "sqlite:"+filepath.Join(c.tmp, "bench.db"))
	c.childDB = cmp.Or(cfg.ChildDB, c.dbURL)
	target, err := store.ParseURL(c.dbURL)
	if err != nil {
		return nil, ConfigError(err.Error())
	}
	if target.Dialect == store.SQLite && cfg.WorkerProcesses > 1 {
		return nil, ErrSQLiteWorkers
	}
	if c.exe = cfg.Exe; c.exe == "" {
		if c.exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find the waymark binary: %w", err)
		}
	}

	// The model: zero latency, in this process.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("model server: %w", err)
	}
	c.model = &http.Server{Handler: llmtest.Handler(reply), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = c.model.Serve(ln) }()

	// The database and the fixture, from this process. A database the
	// bench did not make is refused before anything is written to it.
	var fileKey []byte
	if cfg.DataDir != "" {
		if fileKey, err = secret.LoadKey(cfg.DataDir, ""); err != nil {
			return nil, err
		}
	}
	var (
		t3Dialect typo3.Dialect
		t3Sites   string
	)
	if cfg.TYPO3 != "" {
		if c.t3, t3Dialect, t3Sites, err = c.claimTYPO3(ctx); err != nil {
			return nil, err
		}
	}
	if c.DB, err = store.Open(ctx, c.dbURL); err != nil {
		return nil, err
	}
	key, err := claim(ctx, c.DB, fileKey)
	if err != nil {
		return nil, err
	}
	if err := c.DB.Migrate(ctx); err != nil {
		return nil, err
	}
	c.tokens = newTokens(cfg.Conversations)
	text := site(c.tokens, "http://"+ln.Addr().String()+"/v1", randomHex(16))
	var inst *live.TYPO3
	if c.t3 != nil { // the TYPO3 rows first: the fixture's approvals are checked against them
		if inst, err = c.createTYPO3(ctx, t3Dialect, t3Sites, []byte(text)); err != nil {
			return nil, err
		}
	}
	a, err := app.New(ctx, c.DB, &app.Config{Key: key, Workers: 0, Logger: log, TYPO3: inst})
	if err != nil {
		return nil, err
	}
	opts := a.FixtureOptions()
	opts.HashCost = auth.MinCost // the editors' tokens are the run's own; their checks are not what it measures
	if inst != nil {
		err = c.importWaymarkPart(ctx, []byte(text), opts)
	} else {
		_, err = fixture.Import(ctx, c.DB, []byte(text), "bench.yaml", opts)
	}
	a.Close()
	if err != nil {
		return nil, fmt.Errorf("bench fixture: %w", err)
	}

	// The server and the workers, as children of the same binary, set up by
	// their command line and the run's key alone: the installation's WAYMARK_
	// variables (its WAYMARK_DB above all) stay out of their environment.
	c.env = append(childEnv(os.Environ()), secret.EnvKey+"="+hex.EncodeToString(key))
	c.env = append(c.env, cfg.Env...)
	var t3Args []string
	if c.t3 != nil { // the DSN carries a password: in the environment, not on the command line
		c.env = append(c.env, "WAYMARK_TYPO3="+cfg.TYPO3)
		t3Args = []string{"--typo3-sites", t3Sites}
	}
	inProcess := 2
	if cfg.WorkerProcesses > 0 {
		inProcess = 0
	}
	// Every editor connects from this one address: the server's bound per
	// client address (64 by default) would refuse all beyond it with 429.
	args := []string{"serve", "--db", c.childDB, "--addr", "127.0.0.1:0", "--workers", strconv.Itoa(inProcess),
		"--max-client-conns", strconv.Itoa(2*cfg.Conversations + 16)}
	if cfg.CPUProfile != "" {
		args = append(args, "--cpuprofile", cfg.CPUProfile)
	}
	c.serveArgs = append(append(args, t3Args...), c.leaseArgs()...)
	c.workerArgs = t3Args
	var urls []string
	for range max(cfg.APIProcesses, 1) {
		s, err := startChild(ctx, c.exe, c.env, c.serveArgs...)
		if s != nil {
			c.servers = append(c.servers, s)
		}
		if err != nil {
			return nil, err
		}
		urls = append(urls, s.url)
	}
	c.URL = urls[0]
	if len(urls) > 1 {
		if c.front, err = newBalancer(urls); err != nil {
			return nil, fmt.Errorf("balancer: %w", err)
		}
		c.URL = c.front.url
	}
	for i := range cfg.WorkerProcesses {
		w, err := c.startWorker(ctx, i)
		if err != nil {
			return nil, err
		}
		c.workers = append(c.workers, w)
	}
	c.Client = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * cfg.Conversations}}
	return c, nil
}

func (c *Cluster) leaseArgs() []string {
	var args []string
	if c.cfg.Lease != 0 {
		args = append(args, "--lease", c.cfg.Lease.String())
	}
	if c.cfg.ShutdownTimeout != 0 {
		args = append(args, "--shutdown-timeout", c.cfg.ShutdownTimeout.String())
	}
	return args
}

// startWorker starts worker i. On PostgreSQL its connections carry the
// application name workerAppName(i), which WorkersInWrite looks for.
func (c *Cluster) startWorker(ctx context.Context, i int) (*child, error) {
	db := c.childDB
	if u, err := url.Parse(db); err == nil && c.DB.Dialect() == store.Postgres {
		q := u.Query()
		q.Set("application_name", workerAppName(i))
		u.RawQuery = q.Encode()
		db = u.String()
	}
	return startChild(ctx, c.exe, c.env, append(append([]string{"worker", "--db", db}, c.workerArgs...), c.leaseArgs()...)...)
}

func workerAppName(i int) string { return "waymark-bench-worker-" + strconv.Itoa(i) }

// WorkersInWrite returns the workers (by index) with a content write's
// transaction open at this moment — a connection holding the row lock a
// write of the records table takes until its commit. The crash proof kills
// one of them to kill a worker inside a write. PostgreSQL only (nil on
// SQLite, whose one process runs the workers).
func (c *Cluster) WorkersInWrite(ctx context.Context) ([]int, error) {
	if c.DB.Dialect() != store.Postgres {
		return nil, nil
	}
	names, err := store.Collect(ctx, c.DB, store.Column[string], `SELECT DISTINCT a.application_name
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'relation' AND l.relation = 'records'::regclass AND l.mode = 'RowExclusiveLock'
		AND a.application_name LIKE 'waymark-bench-worker-%'`)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, n := range names {
		if i, err := strconv.Atoi(strings.TrimPrefix(n, "waymark-bench-worker-")); err == nil {
			out = append(out, i)
		}
	}
	return out, nil
}

// Close stops the children and the model and removes the run's files.
func (c *Cluster) Close() {
	c.mu.Lock()
	ws, ss := c.workers, c.servers
	c.workers, c.servers = nil, nil
	c.mu.Unlock()
	for _, w := range ws {
		w.stop()
	}
	for _, s := range ss {
		s.stop()
	}
	if c.front != nil {
		c.front.close()
	}
	if c.model != nil {
		_ = c.model.Close()
	}
	if c.DB != nil {
		_ = c.DB.Close()
	}
	if c.t3 != nil {
		_ = c.t3.Close()
	}
	if c.tmp != "" {
		_ = os.RemoveAll(c.tmp)
	}
}

// Drive runs Config.Conversations conversations, each starting tours one
// after the other until d has passed, with the answers mix picks, and waits
// for the tours under way to end.
func (c *Cluster) Drive(ctx context.Context, d time.Duration, mix Mix) Result {
	return drive(ctx, c.Client, c.URL, c.tokens, d, mix)
}

// WorkerPIDs are the process ids of the worker children, by index.
func (c *Cluster) WorkerPIDs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	pids := make([]int, len(c.workers))
	for i, w := range c.workers {
		pids[i] = w.cmd.Process.Pid
	}
	return pids
}

// KillWorker ends worker i with SIGKILL, as a crash would, and waits until
// it has exited.
func (c *Cluster) KillWorker(i int) error {
	c.mu.Lock()
	w := c.workers[i]
	c.mu.Unlock()
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill worker %d: %w", i, err)
	}
	<-w.done
	return nil
}

// RestartWorker starts a new worker process in place of worker i, which
// must have exited.
func (c *Cluster) RestartWorker(ctx context.Context, i int) error {
	w, err := c.startWorker(ctx, i)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.gone = append(c.gone, c.workers[i])
	c.workers[i] = w
	c.mu.Unlock()
	return nil
}

// LogLines returns the lines the server and every worker, killed ones
// included, logged that contain every one of subs, each after the name of
// its process ("serve", "worker pid N"): what a failed proof shows of one
// conversation or run.
func (c *Cluster) LogLines(subs ...string) []string {
	c.mu.Lock()
	procs := append(slices.Clone(c.servers), append(slices.Clone(c.gone), c.workers...)...)
	c.mu.Unlock()
	var out []string
	for _, p := range procs {
		if p == nil {
			continue
		}
		name := p.name
		if p.cmd.Process != nil {
			name += " pid " + strconv.Itoa(p.cmd.Process.Pid)
		}
		for _, l := range p.out.lines(subs...) {
			out = append(out, name+": "+l)
		}
	}
	return out
}

// WorkerCounts stops every worker and returns the store commits and
// statements they logged on their way out.
func (c *Cluster) WorkerCounts() (counts, error) {
	c.mu.Lock()
	ws := c.workers
	c.mu.Unlock()
	var n counts
	for _, w := range ws {
		k, err := w.stopAndCount()
		if err != nil {
			return counts{}, err
		}
		n.commits += k.commits
		n.statements += k.statements
	}
	return n, nil
}

// ServerPID is the (first) server child's process id.
func (c *Cluster) ServerPID() int { return c.server(0).cmd.Process.Pid }

// ServerPeakRSS is the (first) server's peak resident set (VmHWM) in KiB.
func (c *Cluster) ServerPeakRSS() (int64, error) { return peakRSS(c.ServerPID()) }

// deregistrationDelay is how long RestartServer waits between taking a
// server out of the balancer's rotation and its SIGTERM.
const deregistrationDelay = 500 * time.Millisecond

func (c *Cluster) server(i int) *child {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.servers[i]
}

// TerminateWorker stops worker i as a deploy does — SIGTERM — and waits
// until it exited; the error says when it did not exit by itself within
// limit (it is then killed) or exited with a failure.
func (c *Cluster) TerminateWorker(i int, limit time.Duration) error {
	c.mu.Lock()
	w := c.workers[i]
	c.mu.Unlock()
	return w.terminate(limit)
}

// RestartServer restarts server i as a rolling deploy does: it leaves the
// balancer's rotation, gets SIGTERM and must exit by itself within limit
// (the error says otherwise), and a new server takes its place.
func (c *Cluster) RestartServer(ctx context.Context, i int, limit time.Duration) error {
	old := c.server(i)
	if c.front != nil {
		c.front.set(i, "")
		// A request the balancer sent just before may still be on its way
		// over a kept-alive connection, which the stopping server would
		// close unread: the deregistration delay of a deploy (Kubernetes'
		// preStop) lets it arrive first.
		time.Sleep(deregistrationDelay)
	}
	err := old.terminate(limit)
	s, serr := startChild(ctx, c.exe, c.env, c.serveArgs...)
	if serr != nil {
		return errors.Join(err, serr)
	}
	c.mu.Lock()
	c.gone = append(c.gone, old)
	c.servers[i] = s
	c.mu.Unlock()
	if c.front != nil {
		c.front.set(i, s.url)
	}
	return err
}

// LeasePID is the process id in a run's lease owner
// ("kind:host:pid.tag:segment", the tag naming the runtime), 0 when it
// names none.
func LeasePID(owner string) int {
	parts := strings.Split(owner, ":")
	if len(parts) < 4 {
		return 0
	}
	pid, _, _ := strings.Cut(parts[len(parts)-2], ".")
	n, _ := strconv.Atoi(pid)
	return n
}

// Release reads, as its editor, every conversation still processing — a
// read is what releases a conversation whose turn or decision was lost with
// its worker — and returns how many still are.
func (c *Cluster) Release(ctx context.Context) (int, error) {
	type conv struct{ id, owner int64 }
	convs, err := store.Collect(ctx, c.DB, func(sc store.Scanner) (conv, error) {
		var v conv
		return v, sc.Scan(&v.id, &v.owner)
	}, "SELECT id, owner_uid FROM conversations WHERE status = 'processing'")
	if err != nil {
		return 0, fmt.Errorf("processing conversations: %w", err)
	}
	n := 0
	for _, v := range convs {
		u := &user{client: c.Client, base: c.URL, token: c.tokens[v.owner-firstUser]}
		var got conversation
		if err := u.do(ctx, "GET", "/api/conversations/"+strconv.FormatInt(v.id, 10), nil, http.StatusOK, &got); err != nil {
			return 0, err
		}
		if got.Status == "processing" {
			n++
		}
	}
	return n, nil
}
