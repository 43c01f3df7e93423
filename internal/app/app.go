// Package app wires Waymark's packages into one application: store, secret
// box, configurations, tools, runs, the runtime, the queue and the HTTP
// server. It is the one place where the packages meet, shared by
// cmd/waymark and the scenario tests, so both run exactly the same wiring.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"go.opentelemetry.io/otel/trace"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/auth"
	"waymark/internal/buildinfo"
	"waymark/internal/campaign"
	"waymark/internal/chat"
	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/fixture"
	"waymark/internal/httpapi"
	"waymark/internal/llm"
	"waymark/internal/llm/demo"
	"waymark/internal/llm/openai"
	"waymark/internal/llm/providers"
	"waymark/internal/llmconfig"
	"waymark/internal/mcp"
	"waymark/internal/openpoint"
	"waymark/internal/process"
	"waymark/internal/queue"
	"waymark/internal/run"
	"waymark/internal/secret"
	"waymark/internal/site"
	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/tool"
	"waymark/internal/typo3"
	"waymark/internal/typo3/bridge"
	"waymark/internal/typo3/live"
	"waymark/internal/web"
)

// The queue carries the runtime's resumed turns, and the runtime works them.
var (
	_ agent.Resumer       = (*queue.Queue)(nil)
	_ queue.ResumeHandler = (*agent.Runtime)(nil)
)

// Config tunes the application; zero values take the defaults.
type Config struct {
	// Key is the 32-byte secret key; nil loads it with secret.Load from
	// SecretKey (the value of WAYMARK_SECRET_KEY, which cmd/waymark reads)
	// or else the key file in DataDir.
	Key       []byte
	SecretKey string
	DataDir   string
	Workers   int // in-process queue workers (runs and chat jobs); 0: insert-only
	// ChatWorkers overrides how many chat jobs (turns, decisions) this
	// process works at once; 0 takes Workers.
	ChatWorkers int
	Logger      *slog.Logger
	Clock       clock.Clock
	// Version is the version set at build time (main.version); "" or "dev"
	// takes the module version of the binary (buildinfo.Read).
	Version string
	// Provider carries the client settings of openai providers (timeouts, retries, backoff).
	Provider openai.Config
	// Lease is the runtime's lease (default agent.DefaultLease; --lease).
	Lease time.Duration
	// Heartbeat overrides how often a waiting segment renews its lease (tests).
	Heartbeat time.Duration
	// ModelStream asks the model for streamed replies (--model-stream): for a
	// gateway that closes a connection that stays silent while a long reply
	// is generated. A reply is used once it is complete either way, so off
	// (the default) spares decoding it chunk by chunk.
	ModelStream bool
	// DemoPace is the pause between the words of the offline demo model's
	// replies (--demo-pace; 0: at once).
	DemoPace time.Duration
	// PollInterval overrides how often idle workers look for jobs.
	PollInterval time.Duration
	// ResumeWait bounds how long a decision's request waits for the worker
	// that carries it out (default agent.DefaultResumeWait).
	ResumeWait time.Duration
	// MaxOpenRuns caps each user's runs that are queued or waiting at once
	// (0: agent.DefaultMaxOpenRuns).
	MaxOpenRuns int
	// SecureCookies marks the session cookie Secure (--secure-cookies).
	SecureCookies bool
	// MCPOrigins are the origins besides the server's own whose web pages
	// may call /mcp (the --public-url's, when set).
	MCPOrigins []string
	// MCPFormWait and MCPFormProgress are mcp.Config's FormWait and
	// FormProgress (--mcp-form-wait, --mcp-form-progress; 0: the defaults).
	MCPFormWait, MCPFormProgress time.Duration
	// SkillsRoot is the folder directory skill sources must lie in
	// (--skills-root); "" refuses directory sources.
	SkillsRoot string
	// MetricsToken, when set, is the bearer token GET /metrics requires.
	MetricsToken string
	// TrustedProxies are the reverse proxies whose forwarded headers name
	// the client (--trusted-proxies; httpapi.Config.TrustedProxies).
	TrustedProxies []netip.Prefix
	// Tracer, when set, traces HTTP requests, queue jobs, model calls and
	// tool calls (tracing.FromEnv); nil is tracing off.
	Tracer trace.Tracer
	// HashCost is the bcrypt work factor of new password and token hashes:
	// of imports (FixtureOptions), of the administration, and of the check
	// a login of an unknown username pays (0: auth.DefaultCost, 10; tests
	// pass auth.MinCost). A stored hash verifies whatever its cost.
	HashCost int
	// TYPO3, when set, is the TYPO3 installation Waymark runs beside
	// (--typo3, --typo3-sites): its pages, content, languages, users, groups,
	// rights and passwords are read live from it instead of Waymark's own
	// tables; nil runs on Source and Directory (by default the built-in
	// ones).
	TYPO3 *live.TYPO3
	// Source and Directory are the content source and user directory
	// handed to every service that reads records or users (content.Source,
	// access.Directory); nil is the built-in one. Beside TYPO3 both are
	// TYPO3 and may not be set here.
	Source    content.Source
	Directory access.Directory
	// Bridge, when set, is the TYPO3 extension of the installation beside
	// (--typo3-bridge, --typo3-bridge-secret; docs/typo3-bridge.md): approved
	// changes are written through TYPO3's DataHandler as the editor, in her
	// workspace, and backend users signed in to TYPO3 open Waymark with its
	// tickets. It needs TYPO3.
	Bridge *bridge.Client
	// PasswordLogin keeps password logins on beside the bridge
	// (--typo3-password-login); without the bridge they are always on.
	PasswordLogin bool
	// Test holds the hooks tests set (River's shape); zero in production.
	Test TestConfig
}

// TestConfig holds the application's test hooks.
type TestConfig struct {
	// BeforeClaim is chat.TestConfig.BeforeClaim: it runs in a conversation
	// request right before its claim.
	BeforeClaim func(op string)
	// TYPO3Writer replaces the writer into TYPO3 that TYPO3 gives
	// (live.TYPO3.Writer, the same connection), e.g. one reaching the
	// database through a proxy or with a test hook. It needs TYPO3.
	TYPO3Writer *typo3.Writer
}

// App is the wired application.
type App struct {
	DB *store.DB
	// Source and Directory are the content source and user directory every
	// service of the application was handed: TYPO3's beside it
	// (Config.TYPO3), else the built-in ones.
	Source    content.Source
	Directory access.Directory
	Box       *secret.Box
	Configs   *llmconfig.Store
	Tools     *tool.Registry
	Runs      *run.Store
	Runtime   *agent.Runtime
	Queue     *queue.Queue
	Skills    *skill.Store
	Chat      *chat.Service
	Campaigns *campaign.Service
	Server    *httpapi.Server
	MCP       *mcp.Server // the MCP tools: /mcp of Server, and `waymark mcp` over stdio
	log       *slog.Logger

	skillsRoot string // Config.SkillsRoot, for imports
	hashCost   int    // Config.HashCost, for imports
}

// New wires the application on a migrated db and applies the queue's
// migrations; a nil config is the zero Config.
func New(ctx context.Context, db *store.DB, config *Config) (*App, error) {
	cfg := Config{}
	if config != nil {
		cfg = *config
	}
	if db == nil {
		return nil, errors.New("app.New: db is required")
	}
	if err := auth.CheckCost(cfg.HashCost); err != nil {
		return nil, fmt.Errorf("app.New: HashCost: %w", err)
	}
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	clk := cmp.Or[clock.Clock](cfg.Clock, clock.Real{})
	box, err := openBox(ctx, db, cfg, log)
	if err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// The one seam: the source, the directory and the password check are
	// handed to every service that reads them, here; nothing looks them up
	// by database, so two applications on one database may read two sources.
	src, dir, passwords := content.OrBuiltin(cfg.Source), access.OrBuiltin(cfg.Directory), auth.PasswordDirectory(nil)
	if cfg.TYPO3 != nil {
		src, dir, passwords = cfg.TYPO3, cfg.TYPO3, cfg.TYPO3
	}
	checker := access.NewChecker(db, src, dir)
	reg := tool.NewRegistry(db, cfg.Tracer)
	writer, err := recordWriter(cfg, db, src, checker, clk)
	if err != nil {
		return nil, err
	}
	if err := tool.RegisterBuiltins(reg, db, src, dir, writer, checker); err != nil {
		return nil, err
	}
	if err := reg.Register(agent.LoadSkillEntry()); err != nil {
		return nil, err
	}
	configs := llmconfig.New(db, box, dir)
	skills, err := skill.NewStore(db, func(name string) bool { _, ok := reg.Def(name); return ok }, configs,
		&skill.Config{Clock: clk, Root: cfg.SkillsRoot, Directory: dir})
	if err != nil {
		return nil, err
	}
	runs := run.NewStore(db, clk)
	// The queue comes first: the runtime and the chat insert through it, and
	// its workers get them as handlers when they start (StartWorkers).
	lease := cmp.Or(cfg.Lease, agent.DefaultLease)
	q, err := queue.New(db, &queue.Config{Workers: cfg.Workers, ChatWorkers: cmp.Or(cfg.ChatWorkers, cfg.Workers), Logger: log,
		PollInterval: cfg.PollInterval, Reaper: true, ReapEvery: reapEvery(lease), Tracer: cfg.Tracer})
	if err != nil {
		return nil, err
	}
	if err := q.Migrate(ctx); err != nil {
		return nil, err
	}
	metrics := agent.NewMetrics()
	// The chat is built on the runtime and takes the results of its queued
	// turns; the runtime gets a function that calls it, set below before any
	// worker starts (StartWorkers runs after New).
	var conversations *chat.Service
	rt, err := agent.New(agent.Deps{DB: db, Source: src, Directory: dir, Runs: runs, Configs: configs, Tools: reg,
		Providers: tracedProviders(providers.NewWithDemo(configs, cfg.Provider, demo.Model{Pace: cfg.DemoPace}), cfg.Tracer)},
		&agent.Config{Clock: clk, Logger: log, Stream: cfg.ModelStream, Lease: lease, Heartbeat: cfg.Heartbeat, Skills: skills,
			MaxOpenRuns: cfg.MaxOpenRuns, Queue: q, ResumeWait: cfg.ResumeWait,
			Preparer:        process.NewPreparer(db, src, dir, runs, skills, checker),
			ObserveProvider: metrics.ObserveProvider, ObserveRefusal: metrics.ObserveRefusal,
			QueuedResult: func(ctx context.Context, res agent.Result) { conversations.QueuedResult(ctx, res) },
			CompletedTx:  chat.KeepReplyTx})
	if err != nil {
		return nil, err
	}
	ender := process.NewEnder(db, dir, runs)
	points := openpoint.New(db, src, dir, clk)
	catalogue := process.NewCatalogue(db, dir, configs, skills)
	pages := site.New(db, src, checker)
	conversations = chat.New(chat.Deps{DB: db, Source: src, Directory: dir, Runtime: rt, Configs: configs, Skills: skills, Checker: checker, Points: points,
		Ender: ender, Queue: q, Labeler: chatLabels(pages, dir)},
		&chat.Config{Clock: clk, Logger: log, Lease: rt.Lease(), Test: chat.TestConfig{BeforeClaim: cfg.Test.BeforeClaim}})
	campaigns := campaign.New(campaign.Deps{DB: db, Chat: conversations, Site: pages, Skills: skills, Configs: configs, Directory: dir, Queue: q},
		&campaign.Config{Clock: clk, Logger: log, MaxOpenRuns: cfg.MaxOpenRuns})
	build := buildinfo.Read(cfg.Version)
	srv, err := httpapi.New(httpapi.Deps{DB: db, Source: src, Directory: dir, Passwords: passwords, Runtime: rt, Skills: skills,
		Ender: ender, Catalogue: catalogue, Chat: conversations, OpenPoints: points, Site: pages, Configs: configs, Campaigns: campaigns,
		TYPO3Bridge: bridgeOrNil(cfg.Bridge)},
		&httpapi.Config{Logger: log, Clock: clk, Version: build.Version, Commit: build.Commit, SecureCookies: cfg.SecureCookies, MetricsToken: cfg.MetricsToken,
			TrustedProxies: cfg.TrustedProxies, Tracer: cfg.Tracer, HashCost: cfg.HashCost, PasswordLoginOff: cfg.Bridge != nil && !cfg.PasswordLogin})
	if err != nil {
		return nil, err
	}
	ui, err := web.New(web.Deps{API: srv, Chat: conversations, OpenPoints: points, Runtime: rt, Site: pages,
		Catalogue: catalogue, DB: db, Source: src, Directory: dir, Configs: configs, Ender: ender, Skills: skills, Campaigns: campaigns}, &web.Config{Logger: log, TYPO3Backend: typo3Backend(cfg.Bridge)})
	if err != nil {
		return nil, err
	}
	ui.Register()
	// MCP clients reach the same services at /mcp (Streamable HTTP).
	tools := mcp.New(mcp.Deps{DB: db, Directory: dir, Chat: conversations, OpenPoints: points, Site: pages, Catalogue: catalogue, Configs: configs,
		Skills: skills, Inbox: rt, Campaigns: campaigns}, &mcp.Config{Logger: log, Version: build.Version,
		FormWait: cfg.MCPFormWait, FormProgress: cfg.MCPFormProgress})
	mcpHandler := tools.Handler(srv, cfg.MCPOrigins)
	for _, m := range []string{"GET", "POST", "DELETE"} {
		srv.Mount(m+" /mcp", mcpHandler)
	}
	if err := srv.Registry().Register(newRunMetrics(db, runs, q)); err != nil {
		return nil, err
	}
	for _, c := range append(db.Collectors(), metrics.Collectors()...) {
		if err := srv.Registry().Register(c); err != nil {
			return nil, err
		}
	}
	return &App{DB: db, Source: src, Directory: dir, Box: box, Configs: configs, Tools: reg, Runs: runs, Runtime: rt, Queue: q, Skills: skills, Chat: conversations, Campaigns: campaigns, Server: srv, MCP: tools, log: log, skillsRoot: cfg.SkillsRoot, hashCost: cfg.HashCost}, nil
}

// bridgeOrNil is b as the API's bridge: a nil interface without one.
func bridgeOrNil(b *bridge.Client) httpapi.TYPO3Bridge {
	if b == nil {
		return nil
	}
	return b
}

// typo3Backend is the URL of the TYPO3 backend behind b ("" without one).
func typo3Backend(b *bridge.Client) string {
	if b == nil {
		return ""
	}
	return b.Base() + "typo3/"
}

// Close waits for the chat's running turns and decisions (of a chat
// without a queue; with one, they are queue jobs, which Run's stop waits
// for first).
func (a *App) Close() { a.Chat.Close() }

// Handler is the HTTP API.
func (a *App) Handler() http.Handler { return a.Server.Handler() }

// FixtureOptions are the options imports run with: the secret box, the registered tools, the
// skills root, the hash cost, and the application's source and directory.
func (a *App) FixtureOptions() *fixture.Options {
	var names []string
	for _, d := range a.Tools.List() {
		names = append(names, d.Name)
	}
	return &fixture.Options{Secrets: a.Box, ToolNames: names, SkillsRoot: a.skillsRoot, HashCost: a.hashCost,
		Source: a.Source, Directory: a.Directory}
}

// tracedProviders gives the models of providers a span per call (nil t:
// providers as they are).
func tracedProviders(providers agent.ProviderFunc, t trace.Tracer) agent.ProviderFunc {
	if t == nil {
		return providers
	}
	return func(ctx context.Context, cfg llmconfig.Configuration) (llm.Provider, error) {
		p, err := providers(ctx, cfg)
		return llm.Traced(p, t, string(cfg.ProviderType)), err
	}
}

// reapEvery is how often the installation's reaper runs: a quarter of the
// lease (at least a second), so a crashed process's runs are reaped within
// about a lease and a quarter.
func reapEvery(lease time.Duration) time.Duration { return max(lease/4, time.Second) }

// reap is one pass of the installation's reaper: the runtime's (runs whose
// lease lapsed, lost jobs), then the chat's (conversations whose turn or
// answer was lost, settled without waiting for someone to read them).
func (a *App) reap(ctx context.Context) error {
	err := a.Runtime.ReapJob(ctx)
	n, cerr := a.Chat.Reap(ctx)
	if cerr != nil {
		a.log.Error("reaper: chat", "err", cerr)
	} else if n > 0 {
		a.log.Info("reaper: chat", "settled", n)
	}
	m, merr := a.Campaigns.Reap(ctx)
	if merr != nil {
		a.log.Error("reaper: campaigns", "err", merr)
	} else if m > 0 {
		a.log.Info("reaper: campaigns", "handed on", m)
	}
	return errors.Join(err, cerr, merr)
}
