package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"waymark/internal/clock"
	"waymark/internal/demo"
	"waymark/internal/fixture"
	"waymark/internal/httpapi"
	"waymark/internal/store"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func cmdServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags("serve", e.stderr)
	dbURL := dbFlag(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	workers := fs.Int("workers", 2, "in-process queue workers (0: none)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkAddr(*addr); err != nil {
		return err
	}
	if *workers < 0 {
		return fmt.Errorf("%w: --workers must be 0 or more", errUsage)
	}
	db, err := openDB(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	return serve(ctx, e, db, *addr, func(url string) {
		fmt.Fprintf(e.stdout, "waymark serving %s on %s\n", db.Addr, url)
	})
}

func cmdDemo(ctx context.Context, e *env, args []string) error {
	fs := newFlags("demo", e.stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	file := fs.String("db", "", "SQLite file for the demo (default: a new temporary file)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkAddr(*addr); err != nil {
		return err
	}
	path := *file
	if path == "" {
		dir, err := os.MkdirTemp("", "waymark-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "demo.db")
	}
	db, err := openDB(ctx, "sqlite:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	sum, err := fixture.Import(ctx, db, demo.Fixture, "site.yaml")
	if err != nil {
		return fmt.Errorf("demo site: %w", err)
	}
	return serve(ctx, e, db, *addr, func(url string) {
		w := e.stdout
		fmt.Fprintf(w, "Waymark demo: %s (database %s)\n", url, path)
		fmt.Fprintf(w, "Demo site imported: %s\n\nLogins (password / API token):\n", sum)
		for _, l := range demo.Logins() {
			pw := l.Password
			if pw == "" {
				pw = "-"
			}
			fmt.Fprintf(w, "  %-9s %-17s %-21s %s\n", l.Username, pw, l.Token, l.Role)
		}
		fmt.Fprintf(w, "\nTry: curl -H 'Authorization: Bearer demo-token-erika' %s/api/me\n", url)
		fmt.Fprintln(w, "Stop with Ctrl-C.")
	})
}

// serve runs the HTTP server until ctx ends; ready gets the base URL.
func serve(ctx context.Context, e *env, db *store.DB, addr string, ready func(url string)) error {
	srv, err := httpapi.New(httpapi.Config{DB: db, Logger: e.log, Clock: clock.Real{}, Version: version})
	if err != nil {
		return err
	}
	return httpapi.Serve(ctx, addr, srv.Handler(), e.log, func(a string) { ready("http://" + a) })
}

func checkAddr(addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%w: --addr %q: %w", errUsage, addr, err)
	}
	return nil
}
