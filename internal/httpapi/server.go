package httpapi

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel/trace"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/auth"
	"waymark/internal/campaign"
	"waymark/internal/chat"
	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/llmconfig"
	"waymark/internal/openpoint"
	"waymark/internal/process"
	"waymark/internal/site"
	"waymark/internal/skill"
	"waymark/internal/store"
)

// Deps are the parts the server serves. DB is required; a part left nil
// leaves its routes out.
type Deps struct {
	DB *store.DB
	// Source and Directory are the installation's content source and user
	// directory (nil: the built-in ones); Passwords checks password logins
	// instead of Waymark's own hashes (nil: Waymark's own; beside TYPO3,
	// TYPO3's).
	Source    content.Source
	Directory access.Directory
	Passwords auth.PasswordDirectory
	// Runtime serves the runs API (/api/runs…, /api/inbox); nil leaves those routes out.
	Runtime *agent.Runtime
	// Skills serves the skills API (/api/skills…); nil leaves those routes out.
	Skills *skill.Store
	// Ender and Catalogue serve end-process and the process-skill catalogue (ADR-228 items 7, 8).
	Ender     *process.Ender
	Catalogue *process.Catalogue
	// Chat serves the conversations API; nil leaves those routes out.
	Chat *chat.Service
	// Campaigns serves the campaigns API (/api/campaigns…); nil leaves those routes out.
	Campaigns *campaign.Service
	// OpenPoints serves the open points of a page and the site-wide dashboard.
	OpenPoints *openpoint.Store
	// Site serves what the editor's screens read (page tree, page preview); nil
	// leaves those routes out.
	Site *site.Site
	// Configs serves the administration of configurations (/api/admin/configurations…)
	// and the configurations a user may use (GET /api/configurations).
	Configs *llmconfig.Store
	// TYPO3Bridge, when set, lets backend users signed in to TYPO3 open
	// Waymark with a ticket of the TYPO3 extension (POST /api/login/typo3,
	// and the web UI's /typo3/enter); nil refuses tickets.
	TYPO3Bridge TYPO3Bridge
}

// Config holds how the server behaves; nil or a zero field is its default.
type Config struct {
	Logger   *slog.Logger         // nil: slog.Default()
	Clock    clock.Clock          // nil: the wall clock
	Registry *prometheus.Registry // nil: a new registry with Go and process collectors
	Version  string               // reported by /healthz and waymark_build_info
	Commit   string               // likewise
	// TrustedProxies are the networks of the reverse proxies in front of
	// the server (--trusted-proxies; ParseTrustedProxies): only a request
	// from one of them has its client named by X-Forwarded-For or Forwarded
	// (clientIP). None: the peer is the client.
	TrustedProxies []netip.Prefix
	// MetricsToken, when set, is the bearer token GET /metrics requires
	// (--metrics-token): metrics need not be public.
	MetricsToken string
	// SecureCookies marks the session cookie Secure even when the request
	// came over plain HTTP (behind a TLS-terminating proxy;).
	SecureCookies bool
	// Tracer, when set, gives every request a server span;
	// nil is tracing off and costs nothing.
	Tracer trace.Tracer
	// HashCost is the bcrypt work factor of the passwords and tokens the
	// administration stores and of the unknown-username check of a login (0:
	// auth.DefaultCost; tests pass auth.MinCost). A cost auth.CheckCost
	// refuses fails New.
	HashCost int
	// PasswordLoginOff refuses password logins (beside TYPO3 with the
	// bridge: editors sign in through TYPO3, second factor included).
	PasswordLoginOff bool
}

// HandlerFunc is a route handler. It returns an error instead of writing
// one; the server's adapter maps it to a status and an error answer.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Server is Waymark's HTTP API: a stdlib ServeMux with method patterns behind
// one chain of middleware.
type Server struct {
	db           *store.DB
	src          content.Source
	dir          access.Directory
	logger       *slog.Logger
	clock        clock.Clock
	registry     *prometheus.Registry
	version      string
	commit       string
	secure       bool         // SecureCookies
	tracer       trace.Tracer // nil: no spans
	auth         *auth.Authenticator
	mux          *http.ServeMux
	metrics      metrics
	runtime      *agent.Runtime
	skills       *skill.Store
	ender        *process.Ender
	catalogue    *process.Catalogue
	chat         *chat.Service
	campaigns    *campaign.Service
	points       *openpoint.Store
	patterns     []string // every registered route, in order (Routes)
	site         *site.Site
	configs      *llmconfig.Store
	metricsToken string         // GET /metrics needs it as a bearer token when set
	hashCost     int            // Config.HashCost
	trusted      []netip.Prefix // Config.TrustedProxies
	bridge       TYPO3Bridge    // Config.TYPO3Bridge
	noPassword   bool           // Config.PasswordLoginOff
}

type metrics struct {
	requests *prometheus.CounterVec   // code, method, route
	duration *prometheus.HistogramVec // method, route
}

// New builds a server with the routes of routes.go registered.
func New(d Deps, c *Config) (*Server, error) {
	if d.DB == nil {
		return nil, errors.New("httpapi: Deps.DB is required")
	}
	var cfg Config
	if c != nil {
		cfg = *c
	}
	if err := auth.CheckCost(cfg.HashCost); err != nil {
		return nil, fmt.Errorf("httpapi: Config.HashCost: %w", err)
	}
	s := &Server{
		db:           d.DB,
		logger:       cmp.Or(cfg.Logger, slog.Default()),
		clock:        cmp.Or[clock.Clock](cfg.Clock, clock.Real{}),
		version:      cfg.Version,
		commit:       cfg.Commit,
		metricsToken: cfg.MetricsToken,
		tracer:       cfg.Tracer,
		secure:       cfg.SecureCookies,
		runtime:      d.Runtime,
		skills:       d.Skills,
		ender:        d.Ender,
		catalogue:    d.Catalogue,
		chat:         d.Chat,
		campaigns:    d.Campaigns,
		points:       d.OpenPoints,
		site:         d.Site,
		configs:      d.Configs,
		mux:          http.NewServeMux(),
		src:          content.OrBuiltin(d.Source),
		dir:          access.OrBuiltin(d.Directory),
		hashCost:     cfg.HashCost,
		trusted:      cfg.TrustedProxies,
		bridge:       d.TYPO3Bridge,
		noPassword:   cfg.PasswordLoginOff,
	}
	s.registry = cfg.Registry
	if s.registry == nil {
		s.registry = prometheus.NewRegistry()
	}
	if err := s.registerMetrics(); err != nil {
		return nil, err
	}
	elsewhere := auth.Elsewhere{Passwords: d.Passwords}
	if d.TYPO3Bridge != nil {
		elsewhere.TYPO3Sessions = d.TYPO3Bridge
	}
	s.auth = auth.NewLimited(s.db, s.clock, elsewhere, auth.Limits{HashCost: cfg.HashCost})
	// The screens' reads first: the authorization matrix calls the routes in
	// this order, and its administration rows change the fixture's groups.
	s.screenRoutes()
	s.routes()
	return s, nil
}

func (s *Server) registerMetrics() error {
	s.metrics.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "http_requests_total",
		Help: "HTTP requests answered, by status code, method and route pattern.",
	}, []string{"code", "method", "route"})
	s.metrics.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "http_request_duration_seconds",
		Help:    "Time to answer HTTP requests, by method and route pattern.",
		Buckets: prometheus.DefBuckets,
	}, []string{"method", "route"})
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "waymark_build_info",
		Help: "Always 1; its labels say which build of Waymark this process runs.",
	}, []string{"version", "commit", "goversion"})
	build.WithLabelValues(s.version, s.commit, runtime.Version()).Set(1)
	for _, c := range []prometheus.Collector{s.metrics.requests, s.metrics.duration, build} {
		if err := s.registry.Register(c); err != nil {
			return fmt.Errorf("httpapi: register metrics: %w", err)
		}
	}
	// A registry handed in may already carry the runtime collectors.
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		var are prometheus.AlreadyRegisteredError
		if err := s.registry.Register(c); err != nil && !errors.As(err, &are) {
			return fmt.Errorf("httpapi: register runtime metrics: %w", err)
		}
	}
	return nil
}

// Handler returns the server's handler with all middleware applied.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Handle registers an authenticated route: h runs only for a request whose
// bearer token or session cookie (with CSRF header on state-changing methods)
// names an active user, available through ActorFrom. Patterns are those of
// http.ServeMux, e.g. "GET /api/runs/{uuid}".
func (s *Server) Handle(pattern string, h HandlerFunc) {
	s.patterns = append(s.patterns, pattern)
	s.mux.Handle(pattern, s.adapt(h, true))
}

// HandlePublic registers a route that needs no authentication.
func (s *Server) HandlePublic(pattern string, h HandlerFunc) {
	s.patterns = append(s.patterns, pattern)
	s.mux.Handle(pattern, s.adapt(h, false))
}

// Routes returns the pattern of every route registered, in the order of
// registration ("GET /api/runs/{uuid}"), e.g. for a test that must cover
// them all. Register every route before serving.
func (s *Server) Routes() []string { return append([]string(nil), s.patterns...) }

// Registry returns the Prometheus registry /metrics serves, for other
// packages to add their metrics to.
func (s *Server) Registry() *prometheus.Registry { return s.registry }

// Auth returns the server's authenticator.
func (s *Server) Auth() *auth.Authenticator { return s.auth }

// adapt is the one adapter between HandlerFuncs and net/http: it records the
// matched route, authenticates when asked, and maps a returned error.
func (s *Server) adapt(h HandlerFunc, authenticated bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		info.route = routeOf(r.Pattern)
		s.securityHeaders(w, r)
		r = r.WithContext(access.WithActorMemo(r.Context())) // one read of a TYPO3 user per request
		if authenticated {
			var err error
			if r, err = s.authenticate(r); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}
