package queue

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/trace"

	"waymark/internal/access"
	"waymark/internal/store"
)

// Handler runs one queued run. It is implemented by agent.Runtime.
type Handler interface {
	RunQueued(ctx context.Context, uuid string) error
}

// JobHandler works a chat job (a conversation's turn or decision) from the
// payload it was inserted with. It is implemented by chat.Service.
type JobHandler interface {
	Work(ctx context.Context, payload json.RawMessage) error
}

// Args is the job: the run uuid and nothing else.
type Args struct {
	Run string `json:"run"`
}

// Kind names the job kind in River's tables.
func (Args) Kind() string { return "waymark_run" }

// ChatArgs is a chat job: what the conversation's worker needs to carry out
// a recorded message or decision.
type ChatArgs struct {
	Job json.RawMessage `json:"job"`
}

// Kind names the chat job kind in River's tables.
func (ChatArgs) Kind() string { return "waymark_chat" }

// InsertOpts puts chat jobs on their own queue, so run workers and chat
// workers are sized apart.
func (ChatArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: QueueChat} }

// CampaignArgs is a campaign's job: the campaign whose pages to work.
type CampaignArgs struct {
	Campaign int64 `json:"campaign"`
}

// Kind names the campaign job kind in River's tables.
func (CampaignArgs) Kind() string { return "waymark_campaign" }

// CampaignHandler works a campaign's job. It is implemented by campaign.Service.
type CampaignHandler interface {
	Work(ctx context.Context, campaign int64) error
}

// reapArgs is the reaper's periodic job.
type reapArgs struct{}

func (reapArgs) Kind() string { return "waymark_reap" }

// The queues: runs, chat jobs, and the reaper's.
const (
	QueueRuns        = river.QueueDefault
	QueueChat        = "chat"
	QueueMaintenance = "maintenance"
	// QueueCampaign carries the campaigns' jobs, one worker per process:
	// a campaign job starts tours (chat jobs) and follows them, so it never
	// takes a slot a tour's turn needs.
	QueueCampaign = "campaign"
)

// DefaultPollInterval is how often idle workers look for jobs on
// PostgreSQL, where the listener wakes them on every insert and polling is
// only the fallback (a job a reaper handed back waits for it). At 200 ms an
// idle worker process used 0.7–1.1 % of a core on its polls alone.
const DefaultPollInterval = time.Second

// DefaultSQLitePoll is how often idle workers look for jobs on SQLite: a
// fallback only. A job this process commits wakes its producers at once
// (kick.go), a job another process commits (`serve --workers 0` beside a
// `worker`) at the listener's next read of River's outbox, and a job
// scheduled for later when River's scheduler makes it available and
// notifies. At 10 ms, when the poll was the only wake-up, an idle `serve`
// used 7–9 % of a core.
const DefaultSQLitePoll = 5 * time.Second

// maintenancePoll is the poll of the reaper's queue: its job comes every
// ReapEvery with an insert notification, and the poll is the fallback.
const maintenancePoll = 5 * time.Second

// DefaultReapEvery is how often the installation's reaper runs.
const DefaultReapEvery = 15 * time.Second

// Config tunes the queue. Zero values take the defaults.
type Config struct {
	Workers int // concurrent runs per process; 0 = this process works no runs
	// ChatWorkers is how many chat jobs (turns, decisions) this process works
	// at once; 0 = none. With Workers and ChatWorkers 0 the queue only inserts.
	ChatWorkers int
	// PollInterval is how often idle workers look for jobs (default
	// DefaultPollInterval, on SQLite DefaultSQLitePoll).
	PollInterval time.Duration
	// Cooldown is the least time between two fetches (default 5ms).
	Cooldown time.Duration
	// Reaper runs the installation's reaper (Handlers.Reap) as a River
	// periodic job, inserted by the elected leader only, so one reaper
	// serves every process on the database; false runs none. A process
	// with Reaper but no workers (an API process) still takes part in the
	// election and, when elected, runs the reaper.
	Reaper    bool
	ReapEvery time.Duration // default DefaultReapEvery
	Logger    *slog.Logger
	// Tracer, when set, traces jobs from their insert to their work
	// (trace.go); nil is tracing off.
	Tracer trace.Tracer
}

// Queue inserts run jobs and, with workers, works them.
type Queue struct {
	db     *store.DB // the store: its transactions and its migration lock
	client *river.Client[*sql.Tx]
	driver riverdriver.Driver[*sql.Tx]
	works  bool
	reaper bool
	runs   int // Config.Workers
	chats  int // Config.ChatWorkers
	// h is what the workers run, given to Start before River starts them.
	h      Handlers
	tracer trace.Tracer // nil: no trace metadata, no spans
	// kicker wakes this process's workers after a commit that inserted a
	// job (SQLite with workers; nil otherwise).
	kicker *kickDriver
	// Listening reports whether workers wake on inserts (PostgreSQL LISTEN/NOTIFY).
	Listening bool
}

// jobAttempts is how often River works one job. The handler returns an
// error only for a fault before it claimed the run (a busy database, say);
// once claimed, the run's lease and the runtime's requeues decide, and a
// repeated attempt loses the claim and does nothing. So a retry is safe and
// keeps a queued run from being stranded by a passing fault.
const jobAttempts = 5

// ErrNoHandler is returned by Start when workers are asked for without a handler.
var ErrNoHandler = errors.New("queue: workers need a handler")

// Handlers are what a queue's workers run. They come with Start, not New:
// each of them inserts through the queue it is given, so the queue exists
// first and nothing is wired after a constructor.
type Handlers struct {
	Runs Handler // the run jobs; required with Config.Workers
	// Campaign works the campaigns' jobs (beside the chat jobs); nil leaves
	// them waiting for a process that has it.
	Campaign CampaignHandler
	Chat     JobHandler                      // the chat jobs; required with Config.ChatWorkers
	Resume   ResumeHandler                   // the resume jobs (on the chat queue); required with Config.ChatWorkers
	Reap     func(ctx context.Context) error // the reaper; required with Config.Reaper
}

// New builds a queue on db; a nil config is the zero Config. With cfg.Workers > 0 the run jobs, with
// cfg.ChatWorkers > 0 the chat jobs and with cfg.Reaper the reaper are
// worked by the Handlers given to Start. On PostgreSQL the workers listen for
// inserts through River's pgx listener on db.ListenPool.
func New(db *store.DB, config *Config) (*Queue, error) {
	cfg := Config{}
	if config != nil {
		cfg = *config
	}
	if cfg.Workers < 0 || cfg.ChatWorkers < 0 {
		return nil, fmt.Errorf("queue: Workers and ChatWorkers must be 0 or more, got %d and %d", cfg.Workers, cfg.ChatWorkers)
	}
	// A process with the reaper takes part in electing the installation's
	// one reaper even when it works no jobs (`serve --workers 0`): the
	// leader then need not be a worker, whose crash would stall recovery
	// for River's leadership lapse (15 s and up to 6 s) each time, and a
	// worker that keeps crashing cannot keep the reaper from running.
	q := &Queue{works: cfg.Workers > 0 || cfg.ChatWorkers > 0 || cfg.Reaper, db: db, reaper: cfg.Reaper,
		runs: cfg.Workers, chats: cfg.ChatWorkers, tracer: cfg.Tracer}
	if db.Dialect() == store.SQLite {
		d := riversqlite.New(db.QueuePool())
		q.driver = d
		if q.works {
			q.kicker = newKickDriver(d)
			q.driver = q.kicker
		}
	} else if q.runs > 0 || q.chats > 0 { // a reaper alone polls its queue: no listener
		pool, err := db.ListenPool(context.Background())
		if err != nil {
			return nil, fmt.Errorf("queue: %w", err)
		}
		q.driver, q.Listening = riverdatabasesql.NewWithPgxListener(db.SQL, pool), true
	} else {
		q.driver = riverdatabasesql.New(db.SQL)
	}
	rc := &river.Config{
		Logger:      cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		MaxAttempts: jobAttempts,
		// The runtime's lease and reaper recover stuck runs; River must not run a job twice.
		// Nor is its rescue by age kept for chat and resume jobs: a decision
		// still at work past a lease (a slow model) would be worked twice.
		// The reapers hand back, after a lease, only a job whose claim says
		// its worker is gone (RescueChatJob, RescueStaleChatJobs,
		// RescueStuckResumes, WithoutLiveJob).
		RescueStuckJobsAfter: 24 * time.Hour,
		JobTimeout:           -1,
		// Also the least time between two insert notifications of a queue:
		// an API process that only inserts wakes the workers of every insert.
		FetchCooldown: cmp.Or(cfg.Cooldown, 5*time.Millisecond),
	}
	if q.works {
		workers := river.NewWorkers()
		river.AddWorker(workers, &worker{q: q})
		river.AddWorker(workers, &chatWorker{q: q})
		river.AddWorker(workers, &resumeWorker{q: q})
		river.AddWorker(workers, &reapWorker{q: q})
		river.AddWorker(workers, &campaignWorker{q: q})
		rc.Workers = workers
		if cfg.Tracer != nil {
			rc.Middleware = []rivertype.Middleware{traceMiddleware(cfg.Tracer)}
		}
		rc.Queues = map[string]river.QueueConfig{}
		if cfg.Reaper {
			rc.Queues[QueueMaintenance] = river.QueueConfig{MaxWorkers: 1, FetchPollInterval: maintenancePoll}
		}
		if cfg.Workers > 0 {
			rc.Queues[QueueRuns] = river.QueueConfig{MaxWorkers: cfg.Workers}
		}
		if cfg.ChatWorkers > 0 {
			rc.Queues[QueueChat] = river.QueueConfig{MaxWorkers: cfg.ChatWorkers}
			// A campaign's job comes with an insert notification (or the
			// kicker's wake-up); its poll is only the fallback, and a
			// third queue polled every second put an idle worker over 1 %
			// of a core.
			rc.Queues[QueueCampaign] = river.QueueConfig{MaxWorkers: 1, FetchPollInterval: maintenancePoll}
		}
		poll := DefaultPollInterval
		if db.Dialect() == store.SQLite {
			poll = DefaultSQLitePoll
		}
		rc.FetchPollInterval = cmp.Or(cfg.PollInterval, poll)
		// On SQLite River's listener reads its outbox, and this process's
		// own inserts reach it at once (kick.go).
		rc.PollOnly = !q.Listening && q.kicker == nil
		if cfg.Reaper {
			rc.PeriodicJobs = []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(cmp.Or(cfg.ReapEvery, DefaultReapEvery)),
				func() (river.JobArgs, *river.InsertOpts) {
					return reapArgs{}, &river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 1}
				}, &river.PeriodicJobOpts{RunOnStart: true})}
		}
	}
	client, err := river.NewClient(q.driver, rc)
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	q.client = client
	return q, nil
}

// Migrate applies River's own migrations, under the store's migration lock
// so that processes starting at once do not race.
func (q *Queue) Migrate(ctx context.Context) error {
	m, err := rivermigrate.New(q.driver, nil)
	if err != nil {
		return fmt.Errorf("queue migrations: %w", err)
	}
	return q.db.WithMigrationLock(ctx, func(ctx context.Context) error {
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("queue migrations: %w", err)
		}
		return nil
	})
}

// InTx runs fn in a transaction that InsertTx can insert jobs in, and
// commits when fn returns nil (store.DB.InTx's rules and errors). The queue
// owns the choice: River needs a database/sql transaction, which on SQLite
// is not InTx's fast one, so domain code that enqueues calls this and never
// store.DB.InSQLTx (TestOnlyTheQueueBeginsDatabaseSQLTransactions).
func (q *Queue) InTx(ctx context.Context, fn func(tx *store.Tx) error) error {
	return q.db.InSQLTx(ctx, fn)
}

// ErrNeedsSQLTx is returned by InsertTx for a transaction without a
// database/sql transaction (begin it with Queue.InTx).
var ErrNeedsSQLTx = errors.New("queue: the job must be inserted in a transaction of InSQLTx")

// InsertTx enqueues run inside tx (from Queue.InTx), to be worked no
// earlier than delay from now.
func (q *Queue) InsertTx(ctx context.Context, tx *store.Tx, run string, delay time.Duration) error {
	if tx.SQL == nil {
		return ErrNeedsSQLTx
	}
	opts := &river.InsertOpts{MaxAttempts: jobAttempts, Metadata: q.traceMetadata(ctx)}
	if delay > 0 {
		opts.ScheduledAt = time.Now().Add(delay)
	}
	if _, err := q.client.InsertTx(ctx, tx.SQL, Args{Run: run}, opts); err != nil {
		return fmt.Errorf("enqueue run %s: %w", run, err)
	}
	q.insertedIn(tx, QueueRuns)
	return nil
}

// chatAttempts: a chat job's handler fails only before it changed anything
// (it checks the conversation's claim first), so a retry is safe.
const chatAttempts = 3

// InsertChatTx enqueues a chat job with payload (JSON-encoded) inside tx
// (from store.DB.InSQLTx), so the message or decision it carries out and
// the job commit together.
func (q *Queue) InsertChatTx(ctx context.Context, tx *store.Tx, payload any) error {
	if tx.SQL == nil {
		return ErrNeedsSQLTx
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("chat job: %w", err)
	}
	if _, err := q.client.InsertTx(ctx, tx.SQL, ChatArgs{Job: raw}, &river.InsertOpts{Queue: QueueChat, MaxAttempts: chatAttempts, Metadata: q.traceMetadata(ctx)}); err != nil {
		return fmt.Errorf("enqueue chat job: %w", err)
	}
	q.insertedIn(tx, QueueChat)
	return nil
}

// campaignAttempts: a campaign job changes nothing twice (every claim of
// its items is guarded), so a retry after a passing fault is safe.
const campaignAttempts = 10

// InsertCampaignTx enqueues the job of campaign id inside tx (from InTx).
// Two jobs of one campaign do no harm: the campaign's lease lets one
// work it (campaign.Service.Work).
func (q *Queue) InsertCampaignTx(ctx context.Context, tx *store.Tx, id int64) error {
	if tx.SQL == nil {
		return ErrNeedsSQLTx
	}
	opts := &river.InsertOpts{Queue: QueueCampaign, MaxAttempts: campaignAttempts, Metadata: q.traceMetadata(ctx)}
	if _, err := q.client.InsertTx(ctx, tx.SQL, CampaignArgs{Campaign: id}, opts); err != nil {
		return fmt.Errorf("enqueue campaign %d: %w", id, err)
	}
	q.insertedIn(tx, QueueCampaign)
	return nil
}

// Start starts the workers on h (no-op for an insert-only queue). A handler
// the configuration needs and h lacks is ErrNoHandler, and nothing starts.
func (q *Queue) Start(ctx context.Context, h Handlers) error {
	if !q.works {
		return nil
	}
	if (q.runs > 0 && h.Runs == nil) || (q.chats > 0 && (h.Chat == nil || h.Resume == nil)) || (q.reaper && h.Reap == nil) {
		return ErrNoHandler
	}
	q.h = h
	return q.client.Start(ctx)
}

// Stop stops fetching jobs and waits for the running ones to finish; it
// returns ctx's error when ctx ends first, and the jobs keep running (a
// StopAndCancel then cancels them).
func (q *Queue) Stop(ctx context.Context) error {
	if !q.works {
		return nil
	}
	return q.client.Stop(ctx)
}

// StopAndCancel cancels the context of every running job and waits (until
// ctx ends) for them to return: the hard stop after a soft one ran out of
// time. River records what each job returned.
func (q *Queue) StopAndCancel(ctx context.Context) error {
	if !q.works {
		return nil
	}
	return q.client.StopAndCancel(ctx)
}

// Depth reports how many run jobs wait to be worked.
func (q *Queue) Depth(ctx context.Context, db store.Querier) (int, error) {
	var n int
	err := db.QueryRow(ctx, "SELECT COUNT(*) FROM river_job WHERE state IN ('available', 'scheduled', 'retryable') AND kind = ?",
		Args{}.Kind()).Scan(&n)
	return n, err
}

// ChatPending reports how many chat jobs are not finished: waiting, due for
// a retry or being worked.
func (q *Queue) ChatPending(ctx context.Context, db store.Querier) (int, error) {
	var n int
	err := db.QueryRow(ctx, "SELECT COUNT(*) FROM river_job WHERE state IN ("+liveStates+") AND kind = ?",
		ChatArgs{}.Kind()).Scan(&n)
	return n, err
}

type worker struct {
	river.WorkerDefaults[Args]
	q *Queue
}

func (w *worker) Work(ctx context.Context, job *river.Job[Args]) error {
	if w.q.h.Runs == nil {
		return ErrNoHandler
	}
	return w.q.h.Runs.RunQueued(access.WithActorMemo(ctx), job.Args.Run) // one read of a TYPO3 user per job
}

type chatWorker struct {
	river.WorkerDefaults[ChatArgs]
	q *Queue
}

func (w *chatWorker) Work(ctx context.Context, job *river.Job[ChatArgs]) error {
	if w.q.h.Chat == nil {
		return ErrNoHandler
	}
	return w.q.h.Chat.Work(access.WithActorMemo(ctx), job.Args.Job)
}

type campaignWorker struct {
	river.WorkerDefaults[CampaignArgs]
	q *Queue
}

func (w *campaignWorker) Work(ctx context.Context, job *river.Job[CampaignArgs]) error {
	if w.q.h.Campaign == nil {
		return nil // the reaper of a process with campaigns hands it on
	}
	return w.q.h.Campaign.Work(access.WithActorMemo(ctx), job.Args.Campaign)
}

type reapWorker struct {
	river.WorkerDefaults[reapArgs]
	q *Queue
}

func (w *reapWorker) Work(ctx context.Context, _ *river.Job[reapArgs]) error {
	if w.q.h.Reap == nil {
		return nil
	}
	return w.q.h.Reap(ctx)
}

// liveStates are the job states of a job not finished yet.
const liveStates = "'available', 'scheduled', 'retryable', 'running', 'pending'"

// WithoutLiveJob returns those of runs (in their order) that have no run job
// left to work — River discarded or finished it, or a worker took it before
// heldSince and never claimed the run (a worker killed between River's fetch
// and the run's claim leaves the job running for River's 24-hour rescue) —
// so the reaper can give them a new one (
// River's tables are read here only). A duplicate job is harmless: its
// pickup loses the claim.
func (q *Queue) WithoutLiveJob(ctx context.Context, runs []string, heldSince time.Time) ([]string, error) {
	runOf := "json_extract(args, '$.run')"
	if q.db.Dialect() == store.Postgres {
		runOf = "args->>'run'"
	}
	live := map[string]bool{}
	err := store.EachIn(runs, func(chunk []any, in string) error {
		found, err := store.Collect(ctx, q.db, func(sc store.Scanner) (string, error) {
			var run, state string
			var taken sql.NullTime
			if err := sc.Scan(&run, &state, &taken); err != nil {
				return "", err
			}
			if state == "running" && taken.Valid && taken.Time.Before(heldSince) {
				return "", nil // taken by a worker that never claimed the run
			}
			return run, nil
		}, `SELECT `+runOf+`, state, attempted_at FROM river_job WHERE kind = ? AND state IN (`+liveStates+`)
			AND `+runOf+` IN (`+in+`)`, append([]any{Args{}.Kind()}, chunk...)...)
		if err != nil {
			return fmt.Errorf("live jobs: %w", err)
		}
		for _, r := range found {
			if r != "" {
				live[r] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range runs {
		if !live[r] {
			out = append(out, r)
		}
	}
	return out, nil
}

// ChatJobWaiting reports whether a chat job whose payload has field equal to
// value waits to be worked, or was taken by a worker at or after heldSince
// (a job taken before it counts as lost with its worker: the caller passes
// now minus one lease). field is a top-level key of the payload
// InsertChatTx was given: letters only.
func (q *Queue) ChatJobWaiting(ctx context.Context, field string, value int64, heldSince time.Time) (bool, error) {
	if field == "" || strings.Trim(field, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return false, fmt.Errorf("chat job field %q: want letters only", field)
	}
	of := "json_extract(args, '$.job." + field + "')"
	if q.db.Dialect() == store.Postgres {
		of = "(args->'job'->>'" + field + "')::bigint"
	}
	type held struct {
		state string
		taken sql.NullTime
	}
	jobs, err := store.Collect(ctx, q.db, func(sc store.Scanner) (held, error) {
		var h held
		return h, sc.Scan(&h.state, &h.taken)
	}, `SELECT state, attempted_at FROM river_job WHERE kind = ?
		AND state IN ('available', 'scheduled', 'retryable', 'pending', 'running') AND `+of+` = ?`, ChatArgs{}.Kind(), value)
	if err != nil {
		return false, err
	}
	for _, j := range jobs {
		if j.state != "running" || (j.taken.Valid && !j.taken.Time.Before(heldSince)) {
			return true, nil
		}
	}
	return false, nil
}
