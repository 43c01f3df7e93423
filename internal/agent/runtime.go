package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
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
	// decision at once: a new run beyond it is ErrTooManyRuns (issue 12
	// item 2). Default DefaultMaxOpenRuns.
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
	// builds next (issue 16 item 5: no setter after New).
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

// Runtime runs requests as runs. It is safe for concurrent use.
type Runtime struct {
	db        *store.DB
	src       content.Source
	dir       access.Directory
	runs      *run.Store
	configs   *llmconfig.Store
	tools     *tool.Registry
	providers ProviderFunc
	queue     Enqueuer
	clk       clock.Clock
	log       *slog.Logger
	cfg       Config
	skills    Skills   // may be nil
	preparer  Preparer // may be nil
	// resumes are this process's requests waiting for their resume jobs.
	resumes resumeWaits
	// halted ends when Halt is called: the segments this runtime drives
	// stop at their next wait (detach).
	halted context.Context
	halt   context.CancelFunc
	// calls are the model calls under way in this process, by run (Draft).
	calls sync.Map
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
// wired after New (issue 16 item 5).
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
	halted, halt := context.WithCancel(context.Background())
	return &Runtime{db: db, src: content.OrBuiltin(d.Source), dir: access.OrBuiltin(d.Directory), runs: runs, configs: configs, tools: tools, providers: providers,
		queue: c.Queue, clk: c.Clock, log: c.Logger, cfg: c, skills: c.Skills, preparer: c.Preparer,
		halted: halted, halt: halt}, nil
}

// Lease is how long a segment holds a run between renewals.
func (rt *Runtime) Lease() time.Duration { return rt.cfg.Lease }

// owner returns a fresh lease owner id naming the kind of segment.
func (rt *Runtime) owner(kind string) string {
	return fmt.Sprintf("%s:%s:%s", kind, rt.cfg.Identity, uuid.NewString()[:8])
}

// usableConfig loads a configuration the actor may use now; unknown,
// inactive and not usable answer alike with ErrConfiguration.
func (rt *Runtime) usableConfig(ctx context.Context, actor, uid int64) (llmconfig.Configuration, error) {
	cfg, err := rt.configs.Get(ctx, uid)
	if errors.Is(err, llmconfig.ErrNotFound) {
		return llmconfig.Configuration{}, ErrConfiguration
	}
	if err != nil {
		return llmconfig.Configuration{}, err
	}
	a, err := access.LoadActor(ctx, rt.dir, rt.db, actor)
	if errors.Is(err, access.ErrNoUser) {
		return llmconfig.Configuration{}, ErrConfiguration
	}
	if err != nil {
		return llmconfig.Configuration{}, err
	}
	if !llmconfig.MayUse(a, cfg) {
		return llmconfig.Configuration{}, ErrConfiguration
	}
	return cfg, nil
}

// requestFlush is the first event of a new run, encoded before its
// transaction so the transaction only writes. Its ids and counts (the
// configuration, the invocation's skill and subject, the predecessor, the
// language, how many messages) are what the run was asked to do; they are
// stored at every privacy level — at none through the metadata filter and
// without the messages — so the status names the predecessor and a
// continuation can tell a turn that has not decided its process yet.
func requestFlush(id string, req Request, p run.Privacy) (run.Flush, error) {
	payload, level := requestPayload(req), p
	if p == run.PrivacyNone {
		delete(payload, "messages")
		level = run.PrivacyMetadata
	}
	ev, err := run.Encode(id, run.NewEvent{Kind: run.EventRequest, Payload: payload}, level)
	if err != nil {
		return run.Flush{}, fmt.Errorf("start run: %w", err)
	}
	return run.Flush{Events: []run.NewEvent{ev}, Privacy: p}, nil
}

// Run starts req interactively as actor and returns once the run suspended or ended.
func (rt *Runtime) Run(ctx context.Context, actor int64, req Request) (Result, error) {
	if err := req.validate(); err != nil {
		return Result{}, err
	}
	cfg, found, err := rt.startConfig(ctx, actor, req)
	if err != nil {
		return Result{}, err
	}
	owner := rt.owner("run")
	var body []byte
	if req.Requeueable {
		owner = rt.owner("worker")
		if body, err = encodeRequest(actor, req); err != nil {
			return Result{}, err
		}
	}
	r := run.Run{UUID: uuid.NewString(), Configuration: req.Configuration, Initiator: actor, Status: run.StatusRunning,
		LeaseOwner: owner, LeaseExpiresAt: rt.clk.Now().Add(rt.cfg.Lease), AllowedTools: req.AllowedTools, Request: body}
	seg := rt.newSegment(r, owner, cfg, false)
	ctx, release := rt.detach(ctx) // a started run is settled even when the caller goes away
	defer release()
	first, err := requestFlush(r.UUID, req, seg.privacy)
	if err != nil {
		return Result{}, err
	}
	err = rt.db.InTx(ctx, func(tx *store.Tx) error {
		if err := rt.createCapped(ctx, tx, r, first); err != nil {
			return err
		}
		if req.StartTx != nil {
			if err := req.StartTx(ctx, tx, r.UUID); err != nil {
				return errStartTx{err}
			}
		}
		return nil
	})
	var sterr errStartTx
	if errors.As(err, &sterr) {
		return Result{}, sterr.err
	}
	if errors.Is(err, ErrTooManyRuns) {
		return Result{}, err
	}
	if err != nil {
		return Result{}, fmt.Errorf("start run: %w", err)
	}
	if req.OnStart != nil {
		req.OnStart(r.UUID)
	}
	st := &state{Messages: req.Messages, Language: req.Language, MaxIterations: req.MaxIterations}
	if !rt.start(ctx, seg, st, found, req) {
		return Result{UUID: r.UUID}, nil
	}
	return rt.drive(ctx, seg, st), nil
}

// errStartTx carries the error of a Request.StartTx out of the transaction as it was.
type errStartTx struct{ err error }

func (e errStartTx) Error() string { return e.err.Error() }

// startConfig loads the configuration of a new run. An ordinary request
// needs one the actor may use now (else ErrConfiguration, and no run is
// made); a process request becomes a run whatever the configuration, and
// the preparer refuses it (configuration_denied) with a reason.
func (rt *Runtime) startConfig(ctx context.Context, actor int64, req Request) (llmconfig.Configuration, bool, error) {
	ctx, end := rt.db.SettingsScope(ctx) // the configuration and the actor: one generation read
	defer end()
	cfg, err := rt.usableConfig(ctx, actor, req.Configuration)
	switch {
	case err == nil:
		return cfg, true, nil
	case errors.Is(err, ErrConfiguration) && req.isProcess():
		if c, gerr := rt.configs.Get(ctx, req.Configuration); gerr == nil {
			return c, false, nil
		}
		return llmconfig.Configuration{UID: req.Configuration}, false, nil
	}
	return llmconfig.Configuration{}, false, err
}

// start prepares the run's process (ADR-228 item 2), composes its skills
// and fixes its tools. It answers false when the run ended here (refused or
// failed); a store error of a queued run's preparation requeues it.
func (rt *Runtime) start(ctx context.Context, seg *segment, st *state, cfgFound bool, req Request) bool {
	prep, err := rt.prepare(ctx, seg, cfgFound, req.Invocation, req.Predecessor)
	var refused Refused
	switch {
	case errors.As(err, &refused):
		rt.refuse(ctx, seg, refused)
		return false
	case err != nil && seg.queued:
		rt.retryPreparation(ctx, seg, err)
		return false
	case err != nil:
		rt.fault(ctx, seg, err, Result{})
		return false
	}
	st.Process = prep.Process
	if req.isProcess() {
		// The lineage is stored before the turn goes on: a later check of the
		// process reads it, and a run that cannot store it does not run (item
		// 4) — a queued run retries as for any store error of its
		// preparation, which keeps the process; an interactive one is refused.
		// Either way the lineage that could not be stored is not sent again
		// with the run's end.
		if err := seg.boundary(ctx); err != nil {
			switch {
			case errors.Is(err, errLost):
			case seg.queued:
				seg.dropEvents(run.EventLineage)
				rt.retryPreparation(ctx, seg, err)
			case store.Unreachable(err):
				// An outage, not a lineage that cannot be stored: the run
				// goes on from its stored request after it.
				seg.dropEvents(run.EventLineage)
				rt.handBack(ctx, seg, err)
			default:
				rt.log.Error("lineage cannot be stored; run refused", "run", seg.run.UUID, "err", err)
				seg.dropEvents(run.EventLineage)
				rt.refuse(ctx, seg, refusedLineageUnstored{})
			}
			return false
		}
	}
	st.Tools = rt.offeredTools(seg.cfg, req.AllowedTools)
	if err := rt.composeSkills(ctx, seg, seg.cfg, st); err != nil {
		rt.fault(ctx, seg, err, Result{})
		return false
	}
	if req.Context != "" {
		st.System = strings.TrimSpace(st.System + "\n\n" + req.Context)
	}
	return true
}

// retryPreparation answers a store error of a queued run's process
// preparation: requeued while the budget lasts (the process is kept: the
// next pickup prepares it again), then failed retries_exhausted.
func (rt *Runtime) retryPreparation(ctx context.Context, seg *segment, err error) {
	if seg.run.RequeueCount >= rt.cfg.MaxRequeues {
		seg.fail(ctx, run.ReasonRetriesExhausted, "process_preparation", "the process could not be prepared")
		return
	}
	rt.log.Warn("process preparation failed; requeued", "run", seg.run.UUID, "err", err)
	if rerr := seg.requeue(ctx); rerr != nil && !errors.Is(rerr, errLost) {
		rt.log.Error("requeue failed", "run", seg.run.UUID, "err", rerr)
	}
}

// Enqueue stores req as a queued run of actor and its job in one transaction and returns the uuid.
func (rt *Runtime) Enqueue(ctx context.Context, actor int64, req Request) (string, error) {
	if rt.queue == nil {
		return "", errors.New("agent: no queue configured")
	}
	if err := req.validate(); err != nil {
		return "", err
	}
	cfg, _, err := rt.startConfig(ctx, actor, req)
	if err != nil {
		return "", err
	}
	body, err := encodeRequest(actor, req)
	if err != nil {
		return "", err
	}
	priv := privacyOf(cfg)
	r := run.Run{UUID: uuid.NewString(), Configuration: req.Configuration, Initiator: actor, Status: run.StatusQueued, Request: body}
	first, err := requestFlush(r.UUID, req, priv)
	if err != nil {
		return "", err
	}
	err = rt.queue.InTx(ctx, func(tx *store.Tx) error {
		if err := rt.createCapped(ctx, tx, r, first); err != nil {
			return err
		}
		return rt.queue.InsertTx(ctx, tx, r.UUID, 0)
	})
	if errors.Is(err, ErrTooManyRuns) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("enqueue run: %w", err)
	}
	return r.UUID, nil
}

// RunQueued works a queued run (the queue's handler). A lost claim (a
// duplicate or stale job) is a non-event. Refusals and failures settle the
// run; only infrastructure faults are returned.
func (rt *Runtime) RunQueued(ctx context.Context, id string) error {
	owner := rt.owner("worker")
	won, err := rt.runs.Claim(ctx, id, owner, rt.cfg.Lease)
	if err != nil || !won {
		return err
	}
	r, err := rt.runs.Get(ctx, id)
	if err != nil {
		return err
	}
	sr, derr := decodeRequest(r.Request)
	cfg, cerr := rt.configs.Get(ctx, r.Configuration)
	seg := rt.newSegment(r, owner, cfg, true)
	if cerr != nil && !errors.Is(cerr, llmconfig.ErrNotFound) {
		return cerr
	}
	if len(r.Suspended) > 0 {
		// A decided turn whose worker died (requeued by the reaper): it goes
		// on from its decision, not from its request (continue.go). Nobody
		// waits for this segment's result: it is handed over like a
		// requeued turn's.
		res, err := rt.continueDecided(ctx, seg)
		if err == nil && rt.cfg.QueuedResult != nil {
			rt.cfg.QueuedResult(ctx, res)
		}
		return err
	}
	// The actor is checked as stored now, at pickup, not as it was at enqueue.
	ok, err := rt.configs.ActorMayUse(ctx, r.Initiator, r.Configuration)
	if err != nil {
		return err
	}
	if derr != nil {
		rt.refuseUnreadable(ctx, seg, ok && cerr == nil, derr)
		return nil
	}
	if (!ok || cerr != nil) && !sr.Request.isProcess() {
		seg.fail(ctx, run.ReasonPolicyDenied, "configuration_denied", "the configuration is not usable by the run's initiator")
		return nil
	}
	st := &state{Messages: sr.Request.Messages, Language: sr.Request.Language, MaxIterations: sr.Request.MaxIterations}
	if !rt.start(ctx, seg, st, ok && cerr == nil, sr.Request) {
		return nil
	}
	res := rt.drive(ctx, seg, st)
	if rt.cfg.QueuedResult != nil {
		rt.cfg.QueuedResult(ctx, res)
	}
	return nil
}

// offeredTools is the request's list ∩ the configuration's tool groups ∩ the registry, sorted.
func (rt *Runtime) offeredTools(cfg llmconfig.Configuration, requested []string) []string {
	groups := map[string]bool{}
	for _, g := range cfg.ToolGroups {
		groups[g] = true
	}
	want := map[string]bool{}
	for _, n := range requested {
		want[n] = true
	}
	var out []string
	for _, d := range rt.tools.List() {
		if requested != nil && !want[d.Name] {
			continue
		}
		if len(groups) > 0 && !groups[d.Group] {
			continue
		}
		out = append(out, d.Name)
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func privacyOf(cfg llmconfig.Configuration) run.Privacy {
	p, err := run.ParsePrivacy(string(cfg.Privacy))
	if err != nil {
		return run.PrivacyMetadata
	}
	return p
}

// requestPayload is the request event: counts always, the messages as content (filtered by privacy).
func requestPayload(req Request) map[string]any {
	p := map[string]any{"configuration": req.Configuration, "messageCount": len(req.Messages), "messages": req.Messages,
		"language": req.Language, "predecessor": req.Predecessor}
	if req.Invocation != nil {
		p["skill"] = req.Invocation.Skill
		if req.Invocation.Subject != nil {
			p["subject"] = map[string]any{"table": req.Invocation.Subject.Table, "uid": req.Invocation.Subject.UID,
				"language": req.Invocation.Subject.Language}
		}
	}
	return p
}

// createCapped stores r, a new run of its initiator, with its first
// events in tx — unless the initiator has Config.MaxOpenRuns runs queued or
// waiting for a decision already (ErrTooManyRuns, nothing stored). The
// insert counts them itself, under the initiator's lock, so that new runs
// of one user created at once cannot both count the last free place.
func (rt *Runtime) createCapped(ctx context.Context, tx *store.Tx, r run.Run, first run.Flush) error {
	if err := tx.LockKey(ctx, "open_runs", r.Initiator); err != nil {
		return err
	}
	won, err := rt.runs.CreateCappedTx(ctx, tx, r, first, rt.cfg.MaxOpenRuns)
	if err != nil {
		return err
	}
	if !won {
		return ErrTooManyRuns
	}
	return nil
}
