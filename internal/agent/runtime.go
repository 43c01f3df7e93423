package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"time"

	"github.com/google/uuid"

	"waymark/internal/access"
	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/llm"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// Defaults of Config.
const (
	DefaultLease       = 60 * time.Second
	DefaultMaxRequeues = 3
	DefaultMaxOpenRuns = 100
)

// ProviderFunc returns the model a configuration names. app.New wires it
// (llm/providers with the offline demo model, traced when tracing is on).
type ProviderFunc func(ctx context.Context, cfg llmconfig.Configuration) (llm.Provider, error)

// Enqueuer inserts a run's job in the transaction that stores the run
// (queue.Queue); InTx begins that transaction.
type Enqueuer interface {
	InTx(ctx context.Context, fn func(tx *store.Tx) error) error
	InsertTx(ctx context.Context, tx *store.Tx, run string, delay time.Duration) error
	// WithoutLiveJob returns those of runs that have no job left to work
	// (a job a worker took before heldSince and did not finish counts as lost).
	WithoutLiveJob(ctx context.Context, runs []string, heldSince time.Time) ([]string, error)
}

// Config tunes the runtime; zero values take the defaults.
type Config struct {
	Clock  clock.Clock
	Logger *slog.Logger
	Lease  time.Duration // how long a segment holds a run between renewals (default 60 s)
	// Heartbeat is how often a segment that waits on the model or a tool
	// renews its lease (default a third of Lease).
	Heartbeat   time.Duration
	MaxRequeues int // retryable provider failures a queued run may requeue for
	// Backoff is the delay before the n-th requeue (1-based); default 2^n s with jitter.
	Backoff func(n int) time.Duration
	// Identity names this runtime in lease owners (default host:pid.tag,
	// the tag random per runtime, so that Release never takes the runs of
	// an earlier process that had the same pid).
	Identity string
	// Stream asks providers for streamed replies.
	Stream bool
	// Skills composes the configuration's skills into runs; nil runs without skills.
	Skills Skills
	// Preparer runs the start checks of guided processes; nil refuses every
	// invocation and continuation (ADR-228 item 2).
	Preparer Preparer
	// MaxOpenRuns caps each user's runs that are queued or waiting for a
	// decision at once: a new run beyond it is ErrTooManyRuns.
	// Default DefaultMaxOpenRuns.
	MaxOpenRuns int
	// Queue inserts the jobs of queued runs (queue.Queue); nil: Enqueue and
	// requeues are unavailable and the reaper settles what it would requeue.
	Queue Enqueuer
	// ResumeWait bounds how long ApproveOnWorker and SubmitInputOnWorker
	// wait for a worker to carry out the decision before they answer the run
	// as it is (default DefaultResumeWait).
	ResumeWait time.Duration
	// ObserveProvider, when set, is called after every model call with its
	// configuration, duration and error (metrics).
	ObserveProvider func(configuration int64, d time.Duration, err error)
	// ObserveRefusal, when set, is called with the case of every refused
	// invocation or continuation (metrics).
	ObserveRefusal func(refusal string)
	// Test holds the hooks tests set (River's shape); zero in production.
	Test TestConfig
	// QueuedResult, when set, is called on the worker with the result of
	// each segment of a queued run — a turn, or a decided turn continued
	// after its worker died — but not of a resume job, once it
	// suspended or ended — its answer included, which the run stores only at
	// privacy full. The chat's QueuedResult goes here: a turn the reaper
	// requeued (Request.Requeueable) ends on a worker that did not start it,
	// and its conversation takes the answer from there. The chat is built on
	// the runtime, so the wiring passes a function that calls the service it
	// builds next (no setter after New).
	QueuedResult func(ctx context.Context, res Result)
	// CompletedTx, when set, runs inside the transaction that completes a
	// run with an answer, with the answer as the model gave it — at every
	// privacy level, where the run itself keeps it only at privacy full. The
	// chat keeps the reply of a conversation's turn there
	// (chat.KeepReplyTx), so that a worker that dies between the run's end
	// and the hand-over of its result (QueuedResult, a decision's job) does
	// not take the reply with it. An error rolls the completion back.
	CompletedTx func(ctx context.Context, tx *store.Tx, run, answer string) error
}

// TestConfig holds the runtime's test hooks.
type TestConfig struct {
	// BeforeWrite runs between an approval's checks and each approved
	// write's transaction: where a concurrent change lands.
	BeforeWrite func()
	// AfterBeat is called with the run after each won heartbeat renewal.
	AfterBeat func(run string)
}

// Runtime runs requests as runs. It is safe for concurrent use. It is the
// composition of the parts that own different state, each built with the
// dependencies it needs: the Reader reads runs and events, the Driver drives
// a segment and its heartbeat, the Starter starts runs, the Decider carries
// out approvals and decisions, the Reaper reaps and recovers. Their methods
// are the runtime's.
type Runtime struct {
	*Reader
	*Driver
	*Starter
	*Decider
	*Reaper
}

// Deps are the dependencies every runtime needs, all required.
type Deps struct {
	DB        *store.DB
	Runs      *run.Store
	Configs   *llmconfig.Store
	Tools     *tool.Registry
	Providers ProviderFunc
	// Source and Directory are the installation's content source and user
	// directory (nil: the built-in ones).
	Source    content.Source
	Directory access.Directory
}

// New returns a runtime on its dependencies d; cfg carries the optional
// ones (the queue, the skills, the preparer, the observers). Nothing is
// wired after New.
func New(d Deps, cfg *Config) (*Runtime, error) {
	db, runs, configs, tools, providers := d.DB, d.Runs, d.Configs, d.Tools, d.Providers
	if db == nil || runs == nil || configs == nil || tools == nil || providers == nil {
		return nil, errors.New("agent.New: db, runs, configs, tools and providers are required")
	}
	c := Config{}
	if cfg != nil {
		c = *cfg
	}
	c.Clock = cmp.Or[clock.Clock](c.Clock, clock.Real{})
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	c.Lease = cmp.Or(c.Lease, DefaultLease)
	c.MaxOpenRuns = cmp.Or(c.MaxOpenRuns, DefaultMaxOpenRuns)
	c.ResumeWait = cmp.Or(c.ResumeWait, DefaultResumeWait)
	c.Heartbeat = cmp.Or(c.Heartbeat, c.Lease/3)
	if c.MaxRequeues == 0 {
		c.MaxRequeues = DefaultMaxRequeues
	}
	if c.Backoff == nil {
		c.Backoff = func(n int) time.Duration {
			d := time.Duration(1<<min(n, 6)) * time.Second
			return d + time.Duration(rand.Int64N(int64(d/4)+1))
		}
	}
	if c.Identity == "" {
		host, _ := os.Hostname()
		c.Identity = fmt.Sprintf("%s:%d.%s", cmp.Or(host, "waymark"), os.Getpid(), uuid.NewString()[:4])
	}
	if c.Lease < time.Second {
		return nil, fmt.Errorf("agent.New: Lease %v is shorter than a second", c.Lease)
	}
	if c.ResumeWait < 0 {
		return nil, fmt.Errorf("agent.New: ResumeWait %v is negative", c.ResumeWait)
	}
	if c.MaxOpenRuns < 0 {
		return nil, fmt.Errorf("agent.New: MaxOpenRuns %d is negative", c.MaxOpenRuns)
	}
	if c.Heartbeat <= 0 || c.Heartbeat >= c.Lease {
		return nil, fmt.Errorf("agent.New: Heartbeat %v must be positive and shorter than Lease %v", c.Heartbeat, c.Lease)
	}
	d.Source, d.Directory = content.OrBuiltin(d.Source), access.OrBuiltin(d.Directory)
	reaper := newReaper(d, c)
	reader := newReader(d, c)
	driver := newDriver(d, c, reaper)
	decider := newDecider(d, c, driver, reader)
	starter := newStarter(d, c, driver, decider)
	return &Runtime{Reader: reader, Driver: driver, Starter: starter, Decider: decider, Reaper: reaper}, nil
}
