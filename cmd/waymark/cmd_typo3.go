package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
	"waymark/internal/demo"
	"waymark/internal/fixture"

	"waymark/internal/typo3"
	"waymark/internal/typo3/bridge"
)

// typo3Args is the usage line of the typo3 command.
const typo3Args = "check|demo --typo3 DSN --typo3-sites DIR"

// demoArgon2 hashes the passwords of the demo TYPO3 users; zero is TYPO3's
// own cost (64 MiB, 16 passes), as an installation would store them. Tests
// lower it.
var demoArgon2 typo3.Argon2Params

// cmdTYPO3 dispatches the subcommands for running beside TYPO3:
//
//	waymark typo3 check --typo3 DSN --typo3-sites DIR
//	waymark typo3 demo  --typo3 DSN --typo3-sites DIR
//
// check reports what Waymark sees of an installation and changes nothing;
// demo creates the demo TYPO3 database in an empty database and writes its
// site configurations.
func cmdTYPO3(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		args = []string{"check", "-h"} // both subcommands take the same flags
	}
	if len(args) == 0 {
		return fmt.Errorf("%w: want a subcommand: check or demo", errUsage)
	}
	sub, args := args[0], args[1:]
	if sub != "check" && sub != "demo" {
		return fmt.Errorf("%w: unknown subcommand %q: want check or demo", errUsage, sub)
	}
	f := newFlags("typo3 "+sub, e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	switch {
	case len(f.Args()) > 0:
		return fmt.Errorf("%w: typo3 %s takes no arguments, got %q", errUsage, sub, f.Args()[0])
	case f.TYPO3 == "":
		return fmt.Errorf("%w: --typo3 DSN (or WAYMARK_TYPO3) is required: mysql://user:password@host:port/database or postgres://…", errUsage)
	case f.TYPO3Sites == "":
		return fmt.Errorf("%w: --typo3-sites DIR is required: the installation's config/sites folder", errUsage)
	}
	if sub == "check" {
		// The folder is the installation's: a missing one is named before
		// the database is asked anything.
		if st, err := os.Stat(f.TYPO3Sites); err != nil || !st.IsDir() {
			return fmt.Errorf("--typo3-sites %s: the folder does not exist", f.TYPO3Sites)
		}
	}
	db, d, err := typo3.Open(ctx, f.TYPO3)
	if errors.Is(err, typo3.ErrBadDSN) {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	where := redactDSN(f.TYPO3)
	if sub == "demo" {
		return typo3Demo(ctx, e, db, d, where, f.TYPO3Sites)
	}
	r, err := typo3.Check(ctx, db, d, f.TYPO3Sites, time.Now().Unix())
	if err != nil {
		return err
	}
	printCheck(e, where, d, f.TYPO3Sites, r)
	if !r.OK() {
		return errors.New(notUsable(r))
	}
	return f.checkBridge(ctx, e)
}

// checkBridge says how approved changes reach TYPO3: through the extension
// of --typo3-bridge (asked once: a URL that does not answer or a wrong
// secret fails the check), or through the direct SQL writer, with its limits.
func (f *flags) checkBridge(ctx context.Context, e *env) error {
	if f.TYPO3Bridge == "" {
		fmt.Fprintln(e.stdout, "writes: the direct SQL writer (no --typo3-bridge): no TYPO3 login for editors (second factor), "+
			"no DataHandler hooks, reference index, other caches or TSconfig clearCacheCmd, no workspaces "+
			"(a user without live access is refused); install integrations/typo3 and pass --typo3-bridge to write through TYPO3")
		return nil
	}
	if f.TYPO3BridgeSecret == "" {
		return fmt.Errorf("%w: --typo3-bridge needs the shared secret: WAYMARK_TYPO3_BRIDGE_SECRET (or --typo3-bridge-secret)", errUsage)
	}
	c, err := bridge.NewClient(f.TYPO3Bridge, f.TYPO3BridgeSecret, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	info, err := c.Ping(ctx)
	if err != nil {
		return fmt.Errorf("not usable: the TYPO3 extension at %s: %w", c.Base(), err)
	}
	fmt.Fprintf(e.stdout, "writes: through the TYPO3 extension %s at %s (TYPO3 %s, workspaces %s): sign-in from TYPO3, DataHandler as the editor\n",
		info.Extension, c.Base(), info.TYPO3, map[bool]string{true: "installed", false: "not installed"}[info.Workspaces])
	return nil
}

// typo3Demo creates the demo TYPO3 database and writes its site
// configurations under sites. A database that has one of the TYPO3 tables,
// or a site configuration that exists already, is refused before anything
// is changed.
func typo3Demo(ctx context.Context, e *env, db *sql.DB, d typo3.Dialect, where, sites string) error {
	have, err := typo3.ExistingTables(ctx, db, d)
	if err != nil {
		return fmt.Errorf("typo3 database %s: %w", where, err)
	}
	if len(have) > 0 {
		return fmt.Errorf("typo3 database %s already has TYPO3 tables (%s): the demo needs an empty database; nothing was changed",
			where, strings.Join(have, ", "))
	}
	for _, s := range typo3.DemoSites() {
		file := filepath.Join(sites, s.Identifier, "config.yaml")
		if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s exists already: the demo writes its own site configurations; nothing was changed", file)
		}
	}
	if err := typo3.CreateDemo(ctx, db, d, typo3.DemoConfig{Argon2: demoArgon2}); err != nil {
		return fmt.Errorf("typo3 database %s: %w", where, err)
	}
	if err := typo3.WriteDemoSites(sites); err != nil {
		return fmt.Errorf("the demo TYPO3 database %s was created, but its site configurations were not: %w", where, err)
	}
	fmt.Fprintf(e.stdout, "created the demo TYPO3 database \"Nordlicht Digital\" in %s (%s) and its site configurations in %s\n", where, d, sites)
	if part, err := writeDemoPart(filepath.Dir(sites)); err != nil {
		fmt.Fprintf(e.stdout, "Waymark's part of the demo was not written: %v\n", err)
	} else {
		fmt.Fprintf(e.stdout, "wrote Waymark's part of the demo (configurations, skills, tokens, grants) to %s: waymark import --typo3 … --typo3-sites %s %s\n", part, sites, part)
	}
	r, err := typo3.Check(ctx, db, d, sites, time.Now().Unix())
	if err != nil {
		return err
	}
	for _, l := range r.Lines() {
		fmt.Fprintln(e.stdout, l)
	}
	return nil
}

// printCheck writes the report of typo3 check: where it looked, one finding
// a line, and whether Waymark can run on the installation.
func printCheck(e *env, where string, d typo3.Dialect, sites string, r *typo3.Report) {
	fmt.Fprintf(e.stdout, "TYPO3 database %s (%s), site configurations %s\n", where, d, sites)
	for _, l := range r.Lines() {
		fmt.Fprintln(e.stdout, l)
	}
	if r.OK() {
		fmt.Fprintln(e.stdout, "usable: Waymark finds every table and column it needs and the site configurations")
	}
}

// notUsable is the one-line reason typo3 check exits 1.
func notUsable(r *typo3.Report) string {
	var why []string
	if n := len(r.MissingTables); n > 0 {
		why = append(why, fmt.Sprintf("%d missing table(s)", n))
	}
	if n := len(r.MissingColumns); n > 0 {
		why = append(why, fmt.Sprintf("%d missing column(s)", n))
	}
	if r.SitesErr != nil {
		why = append(why, "site configurations unreadable")
	}
	return "not usable: " + strings.Join(why, ", ") + " (the report above names them)"
}

// redactDSN is dsn as it may be printed: the password replaced by xxxxx,
// in the user part and in a password= parameter.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unreadable DSN)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// writeDemoPart writes what Waymark keeps itself of the demo site when it
// runs beside the demo TYPO3 database — configurations, skills, API tokens
// and grants (fixture.WaymarkPart) — as dir/waymark-demo.json, the file
// `waymark import --typo3` takes. An existing file is kept.
func writeDemoPart(dir string) (string, error) {
	file := filepath.Join(dir, "waymark-demo.json")
	doc, err := fixture.Decode(demo.Fixture, "site.yaml")
	if err != nil {
		return "", err
	}
	raw, err := json.MarshalIndent(fixture.WaymarkPart(doc), "", "  ")
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(append(raw, '\n')); err != nil {
		f.Close()
		return "", err
	}
	return file, f.Close()
}
