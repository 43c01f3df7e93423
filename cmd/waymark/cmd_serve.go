package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"waymark/internal/app"
	"waymark/internal/demo"
	"waymark/internal/fixture"
	"waymark/internal/httpapi"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func cmdServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags("serve", e.stderr)
	dbURL := dbFlag(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	workers := fs.Int("workers", 2, "in-process queue workers (0: none; run `waymark worker` elsewhere)")
	chatFlag := chatWorkersFlag(fs)
	dir := fs.String("data-dir", "", "folder of the secret key (default: WAYMARK_DATA_DIR, else the SQLite file's folder; required on PostgreSQL without WAYMARK_SECRET_KEY)")
	skillsRoot := skillsRootFlag(fs)
	maxOpen := maxOpenRunsFlag(fs)
	hf := defineHTTPFlags(fs)
	lease := leaseFlag(fs)
	modelStream := modelStreamFlag(fs)
	metricsToken := fs.String("metrics-token", "", "bearer token GET /metrics requires (none: /metrics is public); prefer the variable to the flag")
	profile := cpuProfileFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkLease(*lease); err != nil {
		return err
	}
	if err := checkAddr(*addr); err != nil {
		return err
	}
	if *maxOpen < 1 {
		return fmt.Errorf("%w: --max-open-runs must be 1 or more", errUsage)
	}
	ho, err := hf.resolve()
	if err != nil {
		return err
	}
	if *workers < 0 {
		return fmt.Errorf("%w: --workers must be 0 or more", errUsage)
	}
	chats, err := chatWorkers(*chatFlag, *workers)
	if err != nil {
		return err
	}
	traces, stopObserving, err := startObserving(ctx, e, *profile)
	if err != nil {
		return err
	}
	defer stopObserving()
	db, err := openDB(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	a, err := app.New(ctx, db, app.Config{DataDir: dataDir(*dir, *dbURL), SkillsRoot: *skillsRoot, Workers: *workers, ChatWorkers: chats,
		Lease: *lease, ModelStream: *modelStream, Logger: e.log, Version: version, MaxOpenRuns: *maxOpen, SecureCookies: ho.secure, MetricsToken: *metricsToken,
		Tracer: traces.Tracer()})
	if err != nil {
		return err
	}
	return serve(ctx, e, a, *addr, ho, func(url string) {
		fmt.Fprintf(e.stdout, "waymark serving %s on %s (%d workers); UI at %s/login\n", db.Addr, url, *workers, url)
	})
}

func cmdDemo(ctx context.Context, e *env, args []string) error {
	fs := newFlags("demo", e.stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	dbURL := fs.String("db", "", "database: sqlite:PATH or postgres://… as everywhere, or a plain SQLite file path (default: a new temporary file)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkAddr(*addr); err != nil {
		return err
	}
	raw := *dbURL
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
	db, err := openDB(ctx, raw)
	if err != nil {
		return err
	}
	defer db.Close()
	path := db.Addr
	a, err := app.New(ctx, db, app.Config{DataDir: dataDir("", raw), Workers: 2, Logger: e.log, Version: version})
	if err != nil {
		return err
	}
	// A database that already has users is kept as it is: importing the
	// demo site over it would undo what was changed since (issue 15 item 4).
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
		sum = "Demo site imported: " + s.String()
	}
	return serve(ctx, e, a, *addr, httpOptions{}, func(url string) {
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
		fmt.Fprintf(w, "API: curl -H 'Authorization: Bearer demo-token-erika' %s/api/me\n", url)
		fmt.Fprintln(w, "Stop with Ctrl-C.")
	})
}

// serve runs the HTTP server and the workers until ctx ends; ready gets the base URL.
func serve(ctx context.Context, e *env, a *app.App, addr string, ho httpOptions, ready func(url string)) error {
	stop, err := a.StartWorkers(ctx)
	if err != nil {
		return err
	}
	defer stop()
	defer a.Close()
	cfg := ho.serve
	cfg.Logger = e.log
	cfg.Ready = func(bound string) { ready(ho.scheme() + "://" + bound) }
	return httpapi.ServeWith(ctx, addr, a.Handler(), &cfg)
}

func checkAddr(addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%w: --addr %q: %w", errUsage, addr, err)
	}
	return nil
}
