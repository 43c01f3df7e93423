package queue

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"waymark/internal/store"
)

// Handler runs one queued run. It is implemented by agent.Runtime.
type Handler interface {
	RunQueued(ctx context.Context, uuid string) error
}

// Args is the job: the run uuid and nothing else.
type Args struct {
	Run string `json:"run"`
}

// Kind names the job kind in River's tables.
func (Args) Kind() string { return "waymark_run" }

// Config tunes the queue. Zero values take the defaults.
type Config struct {
	Workers      int           // concurrent runs per process; 0 = insert-only client
	PollInterval time.Duration // how often idle workers look for jobs (default 200ms)
	// Cooldown is the least time between two fetches (default 5ms).
	Cooldown time.Duration
	Logger   *slog.Logger
}

// Queue inserts run jobs and, with workers, works them.
type Queue struct {
	client  *river.Client[*sql.Tx]
	driver  riverdriver.Driver[*sql.Tx]
	workers int
}

// jobAttempts is how often River works one job. The handler returns an
// error only for a fault before it claimed the run (a busy database, say);
// once claimed, the run's lease and the runtime's requeues decide, and a
// repeated attempt loses the claim and does nothing. So a retry is safe and
// keeps a queued run from being stranded by a passing fault.
const jobAttempts = 5

// ErrNoHandler is returned by New when workers are asked for without a handler.
var ErrNoHandler = errors.New("queue: workers need a handler")

// New builds a queue on db. With cfg.Workers > 0, h runs the jobs once Start is called.
func New(db *store.DB, h Handler, cfg Config) (*Queue, error) {
	if cfg.Workers < 0 {
		return nil, fmt.Errorf("queue: Workers must be 0 or more, got %d", cfg.Workers)
	}
	if cfg.Workers > 0 && h == nil {
		return nil, ErrNoHandler
	}
	var drv riverdriver.Driver[*sql.Tx]
	if db.Dialect() == store.SQLite {
		drv = riversqlite.New(db.QueuePool())
	} else {
		drv = riverdatabasesql.New(db.SQL)
	}
	rc := &river.Config{
		Logger:      cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		MaxAttempts: jobAttempts,
		// The runtime's lease and reaper recover stuck runs; River must not run a job twice.
		RescueStuckJobsAfter: 24 * time.Hour,
		JobTimeout:           -1,
	}
	if cfg.Workers > 0 {
		workers := river.NewWorkers()
		river.AddWorker(workers, &worker{h: h})
		rc.Workers = workers
		rc.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}}
		rc.FetchPollInterval = cmp.Or(cfg.PollInterval, 200*time.Millisecond)
		rc.FetchCooldown = cmp.Or(cfg.Cooldown, 5*time.Millisecond)
		rc.PollOnly = true
	}
	client, err := river.NewClient(drv, rc)
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	return &Queue{client: client, driver: drv, workers: cfg.Workers}, nil
}

// Migrate applies River's own migrations.
func (q *Queue) Migrate(ctx context.Context) error {
	m, err := rivermigrate.New(q.driver, nil)
	if err != nil {
		return fmt.Errorf("queue migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("queue migrations: %w", err)
	}
	return nil
}

// ErrNeedsSQLTx is returned by InsertTx for a transaction without a
// database/sql transaction (begin it with store.DB.InSQLTx).
var ErrNeedsSQLTx = errors.New("queue: the job must be inserted in a transaction of InSQLTx")

// InsertTx enqueues run inside tx (from store.DB.InSQLTx), to be worked no
// earlier than delay from now.
func (q *Queue) InsertTx(ctx context.Context, tx *store.Tx, run string, delay time.Duration) error {
	if tx.SQL == nil {
		return ErrNeedsSQLTx
	}
	opts := &river.InsertOpts{MaxAttempts: jobAttempts}
	if delay > 0 {
		opts.ScheduledAt = time.Now().Add(delay)
	}
	if _, err := q.client.InsertTx(ctx, tx.SQL, Args{Run: run}, opts); err != nil {
		return fmt.Errorf("enqueue run %s: %w", run, err)
	}
	return nil
}

// Start starts the workers (no-op for an insert-only queue).
func (q *Queue) Start(ctx context.Context) error {
	if q.workers == 0 {
		return nil
	}
	return q.client.Start(ctx)
}

// Stop waits for running jobs to finish, then stops.
func (q *Queue) Stop(ctx context.Context) error {
	if q.workers == 0 {
		return nil
	}
	return q.client.Stop(ctx)
}

// Depth reports how many run jobs wait to be worked.
func (q *Queue) Depth(ctx context.Context, db store.Querier) (int, error) {
	var n int
	err := db.QueryRow(ctx, "SELECT COUNT(*) FROM river_job WHERE state IN ('available', 'scheduled', 'retryable') AND kind = ?",
		Args{}.Kind()).Scan(&n)
	return n, err
}

type worker struct {
	river.WorkerDefaults[Args]
	h Handler
}

func (w *worker) Work(ctx context.Context, job *river.Job[Args]) error {
	return w.h.RunQueued(ctx, job.Args.Run)
}
