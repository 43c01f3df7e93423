package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"waymark/internal/access"
	"waymark/internal/clock"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/tool"

	"github.com/google/uuid"
)

// Starter starts runs: interactively (Run), queued (Enqueue) and on the
// worker that picks a queued run up (RunQueued). It prepares a run's
// process and composes its skills (process.go, start.go), then hands the
// segment to the Driver; a queued run that holds a decided turn goes on
// through the Decider. Probe checks a configuration (probe.go).
type Starter struct {
	driving
	deciding
	db        *store.DB
	dir       access.Directory
	runs      *run.Store
	configs   *llmconfig.Store
	tools     *tool.Registry
	providers ProviderFunc
	queue     Enqueuer // may be nil: Enqueue is unavailable
	clk       clock.Clock
	log       *slog.Logger
	cfg       Config
	skills    Skills   // may be nil
	preparer  Preparer // may be nil
}

func newStarter(d Deps, c Config, drv driving, dec deciding) *Starter {
	return &Starter{driving: drv, deciding: dec, db: d.DB, dir: d.Directory, runs: d.Runs, configs: d.Configs, tools: d.Tools,
		providers: d.Providers, queue: c.Queue, clk: c.Clock, log: c.Logger, cfg: c, skills: c.Skills, preparer: c.Preparer}
}

// usableConfig loads a configuration the actor may use now; unknown,
// inactive and not usable answer alike with ErrConfiguration.
func (rt *Starter) usableConfig(ctx context.Context, actor, uid int64) (llmconfig.Configuration, error) {
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
func (rt *Starter) Run(ctx context.Context, actor int64, req Request) (Result, error) {
	if err := req.validate(); err != nil {
		return Result{}, err
	}
	// The configuration and the actor checked at the start and the tools the
	// first round offers read one settings generation: nothing waits between
	// them, and the run's insert cannot move it (store.Tx keeps it across
	// such writes). The scope ends before anything that may wait — a start
	// callback, a process's preparation, the first model call (drive leaves
	// it once the tools are read).
	ctx, endScope := rt.db.SettingsScope(ctx)
	defer endScope()
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
		endScope()
		req.OnStart(r.UUID)
	}
	if req.isProcess() {
		endScope()
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
func (rt *Starter) startConfig(ctx context.Context, actor int64, req Request) (llmconfig.Configuration, bool, error) {
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
func (rt *Starter) start(ctx context.Context, seg *segment, st *state, cfgFound bool, req Request) bool {
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
func (rt *Starter) retryPreparation(ctx context.Context, seg *segment, err error) {
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
func (rt *Starter) Enqueue(ctx context.Context, actor int64, req Request) (string, error) {
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
func (rt *Starter) RunQueued(ctx context.Context, id string) error {
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
func (rt *Starter) offeredTools(cfg llmconfig.Configuration, requested []string) []string {
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
func (rt *Starter) createCapped(ctx context.Context, tx *store.Tx, r run.Run, first run.Flush) error {
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

// composeSkills fixes what the configuration's skills contribute to a run
// starting now: the system text with the instruction sections (from approval
// snapshots), the fenced reference data, and the tool allow-list.
func (rt *Starter) composeSkills(ctx context.Context, seg *segment, cfg llmconfig.Configuration, st *state) error {
	var proc []skill.Section
	var procTools []string
	if st.Process != nil {
		// The pin is the source: the process is composed from its approval snapshot (item 6).
		sec := st.Process.Section
		if sub := st.Process.Subject; sub != nil {
			sec.Body += subjectLine(*sub)
		}
		proc, procTools = []skill.Section{sec}, st.Process.Tools
	}
	st.System = skill.SystemText(cfg.SystemPrompt, proc)
	if rt.skills == nil {
		if st.Process != nil && procTools != nil {
			st.Tools = allowed(st.Tools, skill.AllowList{Declared: true}.WithDeclaration(procTools))
		}
		return nil
	}
	c, err := rt.skills.Compose(ctx, cfg.UID, 0)
	if err != nil {
		return fmt.Errorf("compose skills: %w", err)
	}
	st.System = skill.SystemText(cfg.SystemPrompt, append(c.Instructions, proc...))
	st.Fenced = c.Fenced
	st.Pins = c.Pins()
	al := c.AllowList
	if st.Process != nil {
		al = al.WithDeclaration(procTools)
	}
	st.Tools = allowed(st.Tools, al)
	if len(c.Dropped) > 0 {
		seg.emit(run.EventNotice, map[string]any{"kind": "skill_budget", "reason": "fenced_skills_dropped", "skills": c.Dropped})
	}
	return nil
}
