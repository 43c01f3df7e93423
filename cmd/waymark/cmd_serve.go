package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"waymark/internal/app"
	"waymark/internal/demo"
	"waymark/internal/fixture"
	"waymark/internal/httpapi"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func cmdServe(ctx context.Context, e *env, args []string) error {
	f := newFlags("serve", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	e.log.Debug("options", "options", f) // secrets as [set] (flags.LogValue)
	if err := checkShutdown(f.ShutdownTimeout); err != nil {
		return err
	}
	if err := checkLease(f.Lease); err != nil {
		return err
	}
	if err := checkAddr(f.Addr); err != nil {
		return err
	}
	if err := f.checkRetention(); err != nil {
		return err
	}
	if f.MaxOpenRuns < 1 {
		return fmt.Errorf("%w: --max-open-runs must be 1 or more", errUsage)
	}
	ho, err := f.httpOptions()
	if err != nil {
		return err
	}
	workers, chats, err := queueWorkers(f, 0)
	if err != nil {
		return err
	}
	traces, stopObserving, err := startObserving(ctx, e, f.CPUProfile)
	if err != nil {
		return err
	}
	defer stopObserving()
	in, err := f.openInstallation(ctx)
	if err != nil {
		return err
	}
	defer in.Close()
	db := in.DB
	cfg := f.appConfig(e, in)
	cfg.Workers, cfg.ChatWorkers, cfg.Lease, cfg.ModelStream, cfg.Tracer = workers, chats, f.Lease, f.ModelStream, traces.Tracer()
	cfg.MaxOpenRuns, cfg.SecureCookies, cfg.MetricsToken, cfg.TrustedProxies = f.MaxOpenRuns, ho.secure, f.MetricsToken, ho.trusted
	cfg.MCPOrigins, cfg.PasswordLogin = mcpOrigins(f.PublicURL), f.TYPO3PasswordLogin
	a, err := app.New(ctx, db, cfg)
	if err != nil {
		return err
	}
	ho.serve.ShutdownTimeout = f.ShutdownTimeout
	stopPurges, err := f.schedulePurges(ctx, e, db)
	if err != nil {
		return err
	}
	defer stopPurges()
	return serve(ctx, e, a, f.Addr, ho, func(url string) {
		e.log.Info("waymark serving", "db", db.Addr, "url", url, "ui", url+"/login", "workers", f.Workers)
	})
}

func cmdDemo(ctx context.Context, e *env, args []string) error {
	f := newFlags("demo", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	if err := checkShutdown(f.ShutdownTimeout); err != nil {
		return err
	}
	if err := checkAddr(f.Addr); err != nil {
		return err
	}
	if f.MaxOpenRuns < 1 {
		return fmt.Errorf("%w: --max-open-runs must be 1 or more", errUsage)
	}
	if f.DemoPages < 0 || f.DemoPages > demo.MaxBranchPages {
		return fmt.Errorf("%w: --demo-pages must be 0 to %d", errUsage, demo.MaxBranchPages)
	}
	raw := f.DB
	if raw == "" {
		dir, err := os.MkdirTemp("", "waymark-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		raw = filepath.Join(dir, "demo.db")
	}
	if !strings.Contains(raw, ":") {
		raw = "sqlite:" + raw
	}
	f.DB = raw
	in, err := f.openInstallation(ctx) // demo takes no TYPO3 options: its own built-in site
	if err != nil {
		return err
	}
	defer in.Close()
	db := in.DB
	path := db.Addr
	// The offline model's replies stream into the transcript as they come.
	cfg := f.appConfig(e, in)
	cfg.Workers, cfg.TrustedProxies, cfg.ModelStream, cfg.DemoPace = 2, f.TrustedProxies, true, f.DemoPace
	cfg.MaxOpenRuns = f.MaxOpenRuns
	a, err := app.New(ctx, db, cfg)
	if err != nil {
		return err
	}
	// A database that already has users is kept as it is: importing the
	// demo site over it would undo what was changed since.
	var users int
	if err := db.QueryRow(ctx, "SELECT count(*) FROM be_users").Scan(&users); err != nil {
		return fmt.Errorf("demo site: %w", err)
	}
	sum := fmt.Sprintf("Existing database kept (%d users); the demo site was not imported over it", users)
	if users == 0 {
		s, err := fixture.Import(ctx, db, demo.Fixture, "site.yaml", a.FixtureOptions())
		if err != nil {
			return fmt.Errorf("demo site: %w", err)
		}
		// The guide branch: enough pages with findings for a campaign.
		b, err := fixture.Import(ctx, db, demo.Branch(f.DemoPages), "branch.json", a.FixtureOptions())
		if err != nil {
			return fmt.Errorf("demo site: guide branch: %w", err)
		}
		sum = "Demo site imported: " + s.String() + "; guide branch: " + b.String()
	}
	return serve(ctx, e, a, f.Addr, httpOptions{serve: httpapi.ServeConfig{ShutdownTimeout: f.ShutdownTimeout}}, func(url string) {
		w := e.stdout
		fmt.Fprintf(w, "Waymark demo: open %s/login in your browser (database %s)\n", url, path)
		fmt.Fprintf(w, "%s\n\nLogins (password / API token):\n", sum)
		for _, l := range demo.Logins() {
			pw := l.Password
			if pw == "" {
				pw = "-"
			}
			fmt.Fprintf(w, "  %-9s %-17s %-21s %s\n", l.Username, pw, l.Token, l.Role)
		}
		fmt.Fprintf(w, "\nLog in as erika (erika-demo-pass) and start a tour from the page picker or the dashboard.\n")
		fmt.Fprintf(w, "A campaign over the guide branch (%d pages): curl -H 'Authorization: Bearer demo-token-erika' -H 'Content-Type: application/json' "+
			"-d '{\"process\": \"seo-optimieren\", \"rootPage\": %d, \"depth\": 1, \"filter\": \"descriptionMissing\"}' %s/api/campaigns\n", f.DemoPages, demo.BranchRoot, url)
		fmt.Fprintf(w, "API: curl -H 'Authorization: Bearer demo-token-erika' %s/api/me\n", url)
		fmt.Fprintln(w, "Stop with Ctrl-C.")
	})
}

// serve runs the HTTP server and the workers until ctx ends, then stops
// them in order (app.App.Run; ho.serve.ShutdownTimeout is the soft-stop
// time of both); ready gets the base URL.
func serve(ctx context.Context, e *env, a *app.App, addr string, ho httpOptions, ready func(url string)) error {
	cfg := ho.serve
	cfg.Logger = e.log
	cfg.Ready = func(bound string) { ready(ho.scheme() + "://" + bound) }
	return a.Run(ctx, app.RunConfig{ShutdownTimeout: cfg.ShutdownTimeout, Serve: func(ctx context.Context) error {
		return httpapi.ServeWith(ctx, addr, a.Handler(), &cfg)
	}})
}

// checkShutdown refuses a --shutdown-timeout that is not positive.
func checkShutdown(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%w: --shutdown-timeout must be positive, got %v", errUsage, d)
	}
	return nil
}

func checkAddr(addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%w: --addr %q: %w", errUsage, addr, err)
	}
	return nil
}

// mcpOrigins are the origins besides its own the server takes MCP requests
// from: the --public-url's, when set.
func mcpOrigins(publicURL string) []string {
	if publicURL == "" {
		return nil
	}
	return []string{publicURL}
}
