package mcp

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/access"
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
}

// Config tunes the server; zero values take the defaults.
type Config struct {
	Logger  *slog.Logger // nil: slog.Default()
	Version string       // reported to clients as the implementation's version
	// Settle bounds how long a tool waits for a turn or decision to pause or
	// end before it answers with the conversation still processing
	// (default 2 minutes); get_conversation then reads on.
	Settle time.Duration
}

// Server holds the tools' dependencies; it builds an MCP server per user
// kind (HTTP or stdio) that calls them.
type Server struct {
	d       Deps
	log     *slog.Logger
	version string
	settle  time.Duration

	mu   sync.Mutex              // guards subs
	subs map[subscription]*watch // the watch of each subscription, by session and URI
}

// New returns the server. Chat, OpenPoints, Site, Catalogue, Configs, Skills and DB are required.
func New(d Deps, cfg *Config) *Server {
	if cfg == nil {
		cfg = &Config{}
	}
	if d.DB == nil || d.Chat == nil || d.OpenPoints == nil || d.Site == nil || d.Catalogue == nil || d.Configs == nil || d.Skills == nil {
		panic("mcp: Deps.DB, Chat, OpenPoints, Site, Catalogue, Configs and Skills are required")
	}
	d.Directory = access.OrBuiltin(d.Directory)
	return &Server{d: d, log: cmp.Or(cfg.Logger, slog.Default()), version: cmp.Or(cfg.Version, "dev"),
		settle: cmp.Or(cfg.Settle, 2*time.Minute), subs: map[subscription]*watch{}}
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
		Instructions: "Waymark runs guided tours over the pages of a TYPO3 site: start_tour with a page, a language and a process, " +
			"then answer each card (a proposed change) or question until the tour ends. Every change waits for the user's answer.",
	})
	s.addTools(srv, who)
	s.addResources(srv, who)
	return srv
}
