package campaign

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/chat"
	"waymark/internal/clock"
	"waymark/internal/fault"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/site"
	"waymark/internal/skill"
	"waymark/internal/store"
)

// Chat is what a campaign needs of the chat: the public methods a user's
// tour goes through (chat.Service implements it).
type Chat interface {
	Start(ctx context.Context, actor, page, language, skillUID, configUID int64) (chat.View, error)
	Send(ctx context.Context, actor, id int64, text string) error
	Get(ctx context.Context, actor, id int64) (chat.View, error)
	AnswerWith(ctx context.Context, actor, id int64, digest, answer string, o chat.AnswerOptions) error
	ConfigurationFor(ctx context.Context, actor int64) (llmconfig.Configuration, error)
}

var _ Chat = (*chat.Service)(nil)

// Queue carries a campaign's work (queue.Queue implements it).
type Queue interface {
	InTx(ctx context.Context, fn func(tx *store.Tx) error) error
	// InsertCampaignTx enqueues the work of campaign id inside tx; at most
	// one such job waits per campaign.
	InsertCampaignTx(ctx context.Context, tx *store.Tx, id int64) error
}

// Errors of the campaigns API, with their kinds and wire codes.
var (
	// ErrNotFound answers an unknown campaign and one of another user alike.
	ErrNotFound = fault.New(fault.NotFound, "not_found", "not found")
	// ErrInvalid is wrapped with what the request named wrong.
	ErrInvalid = fault.Detailed(fault.Invalid, "bad_request", "invalid request")
	// ErrState: the campaign's state does not allow the change (a pause of a
	// cancelled campaign, a resume of a running one); nothing changed.
	ErrState = fault.New(fault.Conflict, "campaign_state", "the campaign's state does not allow this")
	// ErrEmpty: the pages chosen hold no page the owner may show in the
	// languages chosen; no campaign was made.
	ErrEmpty = fault.New(fault.Conflict, "campaign_empty", "the campaign would cover no page")
)

// Limits of a campaign's request.
const (
	MaxDepth       = 10
	MaxConcurrency = 8
	// DefaultConcurrency is a campaign's concurrency when its request names none.
	DefaultConcurrency = 2
	// MaxItems bounds the pages × languages of one campaign.
	MaxItems = 5000
	// DefaultInstallationLimit is how many campaign tours run at once in
	// the installation, across its campaigns.
	DefaultInstallationLimit = 4
)

// Filters are the dashboard's page findings a campaign may choose pages by
// (site.Gap kinds).
var Filters = []string{"descriptionMissing", "descriptionShort", "titleMissing", "titleShort"}

// Deps are what a Service needs.
type Deps struct {
	DB        *store.DB
	Chat      Chat
	Site      *site.Site
	Skills    *skill.Store
	Configs   *llmconfig.Store
	Directory access.Directory
	Queue     Queue // nil: nothing is worked (tests of the store alone)
}

// Config tunes a Service; zero values take the defaults.
type Config struct {
	// Limit is how many campaign tours run at once in the installation
	// (default DefaultInstallationLimit).
	Limit int
	// Slice is how long one job works a campaign before it hands the
	// campaign to the next job (default 2 s): a stopping process waits at
	// most that long for it.
	Slice time.Duration
	// Poll is how often a job looks at its running tours (default 200 ms).
	Poll time.Duration
	// Stale is how long an item may stay claimed without its tour before
	// it is pending again (a process died between claim and start; default 2 min).
	Stale time.Duration
	// MaxOpenRuns is the runtime's cap of one user's open runs (default
	// agent.DefaultMaxOpenRuns). Every tour waiting at its card holds one
	// of its owner's, so a campaign starts a page only while the owner
	// has room below the cap, keeping a tenth of it (at least one) for
	// her own chats: a campaign larger than the cap waits for answers
	// instead of failing its pages' tours at the cap.
	MaxOpenRuns int
	Clock       clock.Clock
	Logger      *slog.Logger
}

// Service keeps campaigns and works them.
type Service struct {
	d   Deps
	cfg Config
	clk clock.Clock
	log *slog.Logger
}

// New returns the campaign service of d.
func New(d Deps, cfg *Config) *Service {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	c.Limit = cmp.Or(c.Limit, DefaultInstallationLimit)
	c.Slice = cmp.Or(c.Slice, 2*time.Second)
	c.Poll = cmp.Or(c.Poll, 200*time.Millisecond)
	c.Stale = cmp.Or(c.Stale, 2*time.Minute)
	c.MaxOpenRuns = cmp.Or(c.MaxOpenRuns, agent.DefaultMaxOpenRuns)
	s := &Service{d: d, cfg: c, clk: cmp.Or[clock.Clock](c.Clock, clock.Real{}), log: cmp.Or(c.Logger, slog.New(slog.DiscardHandler))}
	s.d.Directory = access.OrBuiltin(d.Directory)
	return s
}

func (s *Service) now() int64 { return s.clk.Now().UnixMicro() }

// runRoom is how many more tours owner's campaigns may start now: her
// room below the cap of open runs, less the share kept for her own chats
// (Config.MaxOpenRuns). Zero or less: the campaign waits for answers.
func (s *Service) runRoom(ctx context.Context, owner int64) (int, error) {
	n, err := run.CountOpen(ctx, s.d.DB, owner)
	if err != nil {
		return 0, err
	}
	return s.cfg.MaxOpenRuns - max(1, s.cfg.MaxOpenRuns/10) - n, nil
}

// actor loads a user as stored now; an unknown or disabled one is ErrNotFound.
func (s *Service) actor(ctx context.Context, uid int64) (*access.Actor, error) {
	a, err := access.LoadActor(ctx, s.d.Directory, s.d.DB, uid)
	if err != nil {
		if fault.KindOf(err) == fault.NotFound {
			return nil, ErrNotFound
		}
		return nil, err
	}
	if !a.Active() {
		return nil, ErrNotFound
	}
	return a, nil
}
