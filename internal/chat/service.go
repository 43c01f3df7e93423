package chat

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/fault"
	"waymark/internal/llmconfig"
	"waymark/internal/openpoint"
	"waymark/internal/process"
	"waymark/internal/skill"
	"waymark/internal/store"
)

// Runtime is what the chat needs of the agent runtime.
type Runtime interface {
	Run(ctx context.Context, actor int64, req agent.Request) (agent.Result, error)
	Approve(ctx context.Context, actor int64, id string, d agent.Decision) (agent.Result, error)
	SubmitInput(ctx context.Context, actor int64, id string, in agent.Input) (agent.Result, error)
	Status(ctx context.Context, actor int64, id string) (agent.Status, error)
	WaitsFor(ctx context.Context, actor int64, id, digest string) (bool, error)
	Live(ctx context.Context, actor int64, id string) (progress, highlight map[string]any, err error)
	CancelIfWaiting(ctx context.Context, actor int64, id string) (bool, error)
	Cancel(ctx context.Context, actor int64, id string) (bool, error)
	Draft(id string) string
	CutShort(id string)
	Events(ctx context.Context, actor int64, id string, after int64, limit int) ([]agent.Event, error)
}

// PointKeeper records and closes open points (openpoint.Store implements it).
type PointKeeper interface {
	RecordSkipTx(ctx context.Context, tx *store.Tx, skill, page int64, target openpoint.Target) error
	CloseAppliedTx(ctx context.Context, tx *store.Tx, target openpoint.Target, step openpoint.Step, firstStepOK bool) (int, error)
	CloseKeptTx(ctx context.Context, tx *store.Tx, target openpoint.Target) (int, error)
}

var _ PointKeeper = (*openpoint.Store)(nil)

// Errors of the conversation API, with their kinds and wire codes (package
// fault).
var (
	ErrBusy      = fault.New(fault.Conflict, "busy", "busy: a turn is queued or running")
	ErrStaleCard = fault.New(fault.Conflict, "stale_card", "the answer names a card that is no longer waiting")
	// ErrNotRunning: Stop found no turn running (it had ended already).
	ErrNotRunning = fault.New(fault.Conflict, "not_running", "no turn is running")
	// ErrInvalid is wrapped with what the request named wrong.
	ErrInvalid  = fault.Detailed(fault.Invalid, "bad_request", "invalid request")
	ErrNoConfig = fault.New(fault.Conflict, "no_configuration", "no configuration is available to this user")
	// ErrFourEyes refuses a process skill at the start of a conversation on a
	// configuration that requires a second approver: the process refusal (f)
	// before any run, under its refusal code as service_account and
	// skill_unavailable are (409).
	ErrFourEyes = fault.New(fault.Conflict, string(process.SecondApproverRequired), "a process cannot run on a configuration that needs a second approver")
	// ErrNotOffered: the caller answered approve on a four-eyes card (409 second_approver).
	ErrNotOffered = fault.New(fault.Conflict, "second_approver", "a second person must release this change")
	// ErrCannotApply: the caller answered apply (or approve) on a card whose
	// call has a preview error — an invalid or refused call that cannot be
	// applied (409 cannot_apply); the other answers still work.
	ErrCannotApply = fault.New(fault.Conflict, "cannot_apply", "this proposal cannot be applied; answer with another choice")
	ErrUnavailable = fault.New(fault.Conflict, string(process.SkillUnavailable), "skill not available")
	// ErrReadOnlyPage refuses a process on a page the editor may only read:
	// its tour could save none of its proposals (409 page_read_only).
	ErrReadOnlyPage = fault.New(fault.Conflict, "page_read_only", "this page may only be read: a process could save nothing here")
	// ErrLanguageNotEditable refuses a conversation in a language the actor
	// may not edit (TYPO3's allowed_languages of the user and her groups):
	// its tour could save nothing (403 language_not_editable).
	ErrLanguageNotEditable = fault.New(fault.Forbidden, "language_not_editable",
		"you may not edit this language: a conversation could save nothing in it")
	// ErrConfigNotFound answers an unknown, inactive and not usable
	// configuration alike (as the catalogue does, L8.4).
	ErrConfigNotFound = fault.New(fault.NotFound, "configuration_not_found", "configuration not found")
	// ErrServiceAccount refuses a process skill to a service account (ADR-228 item 2).
	ErrServiceAccount = fault.New(fault.Conflict, string(process.ServiceAccount), "a service account cannot run a guided process")
)

// Service runs guided conversations. A request records a message or a
// decision together with a chat job (Deps.Queue); turns and decisions execute
// as those jobs on whichever process works them. Close waits for the jobs of
// a service without a queue, which run on its own goroutines.
//
// Service is the façade over the chat's parts, each a small type given only
// what it uses: turns (a message and its turn), decisions (an answer and its
// decision), recovery (what moves a conversation on when its request or
// worker did not), settle (a run's state onto the conversation, the end all
// of them reach), jobs (a claim committed with its job), tours (a tour's
// end) and reads (views). No part reaches another but through a field set
// in New.
type Service struct {
	turns     *turns
	decisions *decisions
	recovery  *recovery
	settle    *settler
	jobs      *jobs
	tours     *tours
	reads     *reads

	db      *store.DB
	rt      stopper
	clk     clock.Clock
	log     *slog.Logger
	dir     access.Directory
	configs *llmconfig.Store
	skills  *skill.Store
	checker *access.Checker
	test    TestConfig
}

// stopper is what the Service itself needs of the runtime: Stop's cancel.
type stopper interface {
	Draft(id string) string
	Cancel(ctx context.Context, actor int64, id string) (bool, error)
	CutShort(id string)
}

// Deps are what a chat service works with, all given to New (
// nothing is wired after it).
type Deps struct {
	DB *store.DB
	// Source and Directory are the installation's content source and user
	// directory (nil: the built-in ones).
	Source    content.Source
	Directory access.Directory
	Runtime   Runtime
	Configs   *llmconfig.Store
	Skills    *skill.Store
	Checker   *access.Checker
	Points    PointKeeper
	// Ender ends the process of a run, for EndTour and SetSkill; may be nil.
	Ender Ender
	// Labeler describes outcome targets in the view; may be nil.
	Labeler LabelFunc
	// Queue, when set, records each message and decision together with a
	// job, in one transaction, for a chat worker of any process to carry out.
	// Without a queue, jobs run on service goroutines.
	Queue Queue
}

// Config tunes a chat service; the zero value (or nil) is the default.
type Config struct {
	Clock  clock.Clock  // nil: the wall clock
	Logger *slog.Logger // nil: discard
	// Lease is the runtime's lease, after which a turn whose job was taken
	// by a process that stopped counts as lost (default agent.DefaultLease).
	Lease time.Duration
	// Test holds the hooks tests set (River's shape); zero in production.
	Test TestConfig
}

// TestConfig holds the chat's test hooks.
type TestConfig struct {
	// BeforeClaim runs after a request read the conversation and before its
	// compare-and-set claim — op is "message", "answer" or "end-tour" — so
	// that a test can land a concurrent request exactly there.
	BeforeClaim func(op string)
}

// New returns a chat service on d, tuned by cfg (nil: the defaults).
func New(d Deps, cfg *Config) *Service {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	log := cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	clk := cmp.Or[clock.Clock](c.Clock, clock.Real{})
	src := content.OrBuiltin(d.Source)
	dir := access.OrBuiltin(d.Directory)
	lease := cmp.Or(c.Lease, agent.DefaultLease)
	s := &Service{db: d.DB, rt: d.Runtime, clk: clk, log: log, dir: dir, configs: d.Configs, skills: d.Skills,
		checker: d.Checker, test: c.Test}
	s.jobs = newJobs(d.DB, d.Queue, s.work)
	s.settle = newSettler(d.DB, d.Runtime, clk, log, d.Points)
	s.tours = newTours(d.DB, d.Ender, clk, log)
	s.recovery = newRecovery(d.DB, d.Runtime, clk, log, d.Queue, lease, s.jobs, s.settle, s.tours)
	s.turns = newTurns(d.DB, d.Runtime, clk, log, src, dir, d.Points, d.Queue != nil, s.jobs, s.recovery, s.settle, c.Test)
	s.decisions = newDecisions(d.DB, d.Runtime, clk, log, dir, s.jobs, s.recovery, s.settle, c.Test)
	s.reads = newReads(d.DB, src, d.Runtime, d.Skills, d.Labeler)
	return s
}

// Close stops accepting work and waits for running turns.
func (s *Service) Close() { s.jobs.close() }

// Send adds the editor's message and the job of its turn (turns.Send).
func (s *Service) Send(ctx context.Context, actor, id int64, text string) error {
	return s.turns.Send(ctx, actor, id, text)
}

// Answer records the editor's answer to the waiting card and the job that
// carries it out (decisions.Answer, answer.go).
func (s *Service) Answer(ctx context.Context, actor, id int64, digest, answer string) error {
	return s.decisions.Answer(ctx, actor, id, digest, answer)
}

// AnswerWith is Answer with its optional parts (decisions.AnswerWith): a
// variant's instruction for the model.
func (s *Service) AnswerWith(ctx context.Context, actor, id int64, digest, answer string, o AnswerOptions) error {
	return s.decisions.AnswerWith(ctx, actor, id, digest, answer, o)
}

// AnswerQuestion answers the question the conversation waits for
// (decisions.AnswerQuestion).
func (s *Service) AnswerQuestion(ctx context.Context, actor, id int64, digest, option, text string) error {
	return s.decisions.AnswerQuestion(ctx, actor, id, digest, option, text)
}

// QueuedResult takes the result of a queued run's segment (turns.QueuedResult).
func (s *Service) QueuedResult(ctx context.Context, res agent.Result) { s.turns.QueuedResult(ctx, res) }

// Reap settles conversations whose turn or decision was lost (recovery.Reap).
func (s *Service) Reap(ctx context.Context) (int, error) { return s.recovery.Reap(ctx) }

// chatConfig picks the configuration of a new conversation: the one with
// identifier "chat" when the actor may use it, else the first usable one.
func (s *Service) chatConfig(ctx context.Context, a *access.Actor) (llmconfig.Configuration, error) {
	list, err := s.configs.List(ctx)
	if err != nil {
		return llmconfig.Configuration{}, err
	}
	var first *llmconfig.Configuration
	for i := range list {
		if !llmconfig.MayUse(a, list[i]) {
			continue
		}
		if list[i].Identifier == "chat" {
			return list[i], nil
		}
		if first == nil {
			first = &list[i]
		}
	}
	if first == nil {
		return llmconfig.Configuration{}, ErrNoConfig
	}
	return *first, nil
}

// Start opens a conversation about a page in a language, optionally with a
// skill, on the configuration named (0: the chat's default, chatConfig). It
// refuses, creating nothing, what could never start: a
// page that is 0, unknown or not showable by the actor (ErrNotFound alike),
// a language the actor may not edit, a configuration the actor may not use
// (ErrConfigNotFound alike for unknown, inactive and not usable), and a skill
// not in the actor's catalogue — a process skill also for a service account
// and on a four-eyes configuration.
func (s *Service) Start(ctx context.Context, actor, page, language, skillUID, configUID int64) (View, error) {
	a, err := s.activeActor(ctx, actor)
	if err != nil {
		return View{}, err
	}
	if page <= 0 {
		return View{}, ErrNotFound // a conversation is about a page; uid 0 is none
	}
	if ok, err := s.checker.ActorMayShowPage(ctx, a, page); err != nil || !ok {
		if err != nil {
			return View{}, err
		}
		return View{}, ErrNotFound
	}
	if language < 0 {
		return View{}, fmt.Errorf("%w: language %d", ErrInvalid, language)
	}
	if !a.MayEditLanguage(language) {
		return View{}, fmt.Errorf("%w: language %d", ErrLanguageNotEditable, language)
	}
	cfg, err := s.startConfig(ctx, a, configUID)
	if err != nil {
		return View{}, err
	}
	process := false
	if skillUID != 0 {
		if process, err = s.skillFor(ctx, a, cfg, skillUID, page); err != nil {
			return View{}, err
		}
	}
	now := micros(s.clk)
	var id int64
	err = s.db.InTx(ctx, func(tx *store.Tx) error { // a write: under the store's write lock on SQLite
		return tx.QueryRow(ctx, `INSERT INTO conversations (owner_uid, configuration_uid, page_uid, language, skill_uid, process, status,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, actor, cfg.UID, page, language, skillUID, process,
			string(initialStatus()), now, now).Scan(&id)
	})
	if err != nil {
		return View{}, fmt.Errorf("start conversation: %w", err)
	}
	return s.Get(ctx, actor, id)
}

// startConfig is the configuration a new conversation runs on: the one
// named, when the actor may use it, else chatConfig's choice.
func (s *Service) startConfig(ctx context.Context, a *access.Actor, uid int64) (llmconfig.Configuration, error) {
	if uid == 0 {
		return s.chatConfig(ctx, a)
	}
	cfg, err := s.configs.Get(ctx, uid)
	if errors.Is(err, llmconfig.ErrNotFound) || (err == nil && !llmconfig.MayUse(a, cfg)) {
		return llmconfig.Configuration{}, ErrConfigNotFound
	}
	if err != nil {
		return llmconfig.Configuration{}, err
	}
	return cfg, nil
}

// skillFor checks that the skill is in the actor's catalogue of the
// configuration and reports whether it runs a guided process (P.X1: a skill
// runs a process unless it is plain). A process is refused to a service
// account and on a four-eyes configuration, as its start checks would, and
// on a page the editor may only read.
func (s *Service) skillFor(ctx context.Context, a *access.Actor, cfg llmconfig.Configuration, uid, page int64) (bool, error) {
	entries, err := s.skills.Catalogue(ctx, a.UID, cfg.UID)
	if err != nil && store.Unreachable(err) {
		return false, fmt.Errorf("catalogue: %w", err) // an outage, not a refusal (503)
	}
	if err != nil {
		return false, ErrUnavailable
	}
	for _, e := range entries {
		if e.UID != uid {
			continue
		}
		switch {
		case e.Process && a.ServiceAccount:
			return false, ErrServiceAccount
		case e.Process && cfg.RequireSecondApprover:
			return false, ErrFourEyes
		case e.Process:
			// A tour proposes changes: on a page the editor may only read
			// it could save none, so it does not begin.
			edit, err := s.checker.MayEditPages(ctx, a, []int64{page})
			if err != nil {
				return false, err
			}
			if !edit[page].Any() {
				return false, ErrReadOnlyPage
			}
		}
		return e.Process, nil
	}
	return false, ErrUnavailable
}
