package mcp

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/access"
	"waymark/internal/campaign"
	"waymark/internal/chat"
	"waymark/internal/llmconfig"
	"waymark/internal/openpoint"
	"waymark/internal/process"
	"waymark/internal/site"
	"waymark/internal/skill"
	"waymark/internal/store"
)

// Deps are the services the tools call: the same ones the JSON API calls.
type Deps struct {
	DB         *store.DB
	Directory  access.Directory // whose users sign in (nil: the built-in directory)
	Chat       *chat.Service
	OpenPoints *openpoint.Store
	Site       *site.Site
	Catalogue  *process.Catalogue
	Configs    *llmconfig.Store
	Skills     *skill.Store // resolves a process named by its identifier
	Inbox      Inbox        // the four-eyes inbox and release (agent.Runtime)
	// Campaigns serves the campaign tools; nil leaves them out.
	Campaigns *campaign.Service
}

// Config tunes the server; zero values take the defaults.
type Config struct {
	Logger  *slog.Logger // nil: slog.Default()
	Version string       // reported to clients as the implementation's version
	// Settle bounds how long a tool waits for a turn or decision to pause or
	// end before it answers with the conversation still processing
	// (default 2 minutes); get_conversation then reads on.
	Settle time.Duration
	// FormWait bounds how long an elicitation form may stay open (default
	// 30 minutes): a person may take minutes on a card, and the answer is
	// carried out even when the client gave up on the tool call meanwhile.
	// Past it the form is withdrawn (notifications/cancelled) and the card
	// still waits.
	FormWait time.Duration
	// FormProgress is how often a progress notification is sent while a
	// form is open, to a call that asked for progress (default 15 seconds):
	// clients that reset their request timeout on progress keep waiting.
	FormProgress time.Duration
}

// Server holds the tools' dependencies; it builds an MCP server per user
// kind (HTTP or stdio) that calls them.
type Server struct {
	d       Deps
	log     *slog.Logger
	version string
	settle  time.Duration
	// formWait and formProgress are Config.FormWait and Config.FormProgress.
	formWait, formProgress time.Duration

	mu   sync.Mutex              // guards subs
	subs map[subscription]*watch // the watch of each subscription, by session and URI
}

// New returns the server. Every field of Deps is required.
func New(d Deps, cfg *Config) *Server {
	if cfg == nil {
		cfg = &Config{}
	}
	if d.DB == nil || d.Chat == nil || d.OpenPoints == nil || d.Site == nil || d.Catalogue == nil || d.Configs == nil || d.Skills == nil || d.Inbox == nil {
		panic("mcp: Deps.DB, Chat, OpenPoints, Site, Catalogue, Configs, Skills and Inbox are required")
	}
	d.Directory = access.OrBuiltin(d.Directory)
	return &Server{d: d, log: cmp.Or(cfg.Logger, slog.Default()), version: cmp.Or(cfg.Version, "dev"),
		settle: cmp.Or(cfg.Settle, 2*time.Minute), formWait: cmp.Or(cfg.FormWait, 30*time.Minute),
		formProgress: cmp.Or(cfg.FormProgress, 15*time.Second), subs: map[subscription]*watch{}}
}

// whoFunc names the user a request (a tool call, a resource read or
// subscription) acts for: the token's user, loaded as stored now; an error
// when it is gone or disabled. extra is the request's transport
// information (nil over stdio).
type whoFunc func(ctx context.Context, extra *sdk.RequestExtra) (*access.Actor, error)

// mcpServer builds the MCP server with every tool, acting as who says.
func (s *Server) mcpServer(who whoFunc) *sdk.Server {
	var srv *sdk.Server
	srv = sdk.NewServer(&sdk.Implementation{Name: "waymark", Title: "Waymark", Version: s.version}, &sdk.ServerOptions{
		Logger:             s.log,
		SubscribeHandler:   func(ctx context.Context, req *sdk.SubscribeRequest) error { return s.subscribe(ctx, srv, who, req) },
		UnsubscribeHandler: s.unsubscribe,
		// A conversation and the list of them are the user's own: no
		// cache but the user's client may keep them.
		SetCacheable: func(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
			switch req.(type) {
			case *sdk.ReadResourceRequest, *sdk.ListResourcesRequest:
				c.CacheScope = "private"
			}
		},
		Instructions: "Waymark runs guided tours over the pages of a TYPO3 site: start_tour with a page, a language and a process, " +
			"then answer each card (a proposed change) or question until the tour ends. Every change waits for the user's answer.",
	})
	srv.AddReceivingMiddleware(s.receiving(who))
	s.addTools(srv, who)
	s.addInboxTools(srv, who)
	s.addResources(srv, who)
	return srv
}
