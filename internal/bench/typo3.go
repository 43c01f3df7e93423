package bench

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"waymark/internal/fixture"
	"waymark/internal/store"
	"waymark/internal/typo3"
	"waymark/internal/typo3/live"
)

// The bench beside TYPO3 (`bench --typo3`): the editors, their group and
// pages of the generated site are TYPO3 rows in a database the bench fills
// itself, read live by the server and the workers as `serve --typo3` does;
// Waymark keeps its part (tokens, the configuration, the skill) in its own
// database. A real installation must never be touched, so the TYPO3
// database must be empty: one with any table is refused, unchanged.

// typo3Site is the site configuration the bench writes for its TYPO3 site.
var typo3Site = typo3.Site{Identifier: "bench", RootPageID: 1, Base: "http://localhost/", WebsiteTitle: "Waymark bench",
	Languages: []typo3.Language{{ID: 0, Title: "English", Locale: "en_US.UTF-8", Base: "/", Enabled: true}}}

// redact is a DSN without its password, for messages.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil {
		return u.Redacted()
	}
	return "(unparsable DSN)"
}

// claimTYPO3 opens the TYPO3 database of cfg and refuses it, unchanged,
// unless it has no table at all; it also refuses a sites folder that holds
// anything. It returns the database, its dialect and the sites folder.
func (c *Cluster) claimTYPO3(ctx context.Context) (*sql.DB, typo3.Dialect, string, error) {
	where := redact(c.cfg.TYPO3)
	sites := c.cfg.TYPO3Sites
	if sites == "" {
		sites = filepath.Join(c.tmp, "sites")
	} else if entries, err := os.ReadDir(sites); err == nil && len(entries) > 0 {
		return nil, "", "", fmt.Errorf("--typo3-sites %s is not empty: bench --typo3 writes its own site configuration there and wrote nothing", sites)
	}
	db, d, err := typo3.Open(ctx, c.cfg.TYPO3)
	if err != nil {
		return nil, "", "", err
	}
	q := `SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()`
	if d == typo3.Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		db.Close()
		return nil, "", "", fmt.Errorf("typo3 database %s: %w", where, err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			db.Close()
			return nil, "", "", fmt.Errorf("typo3 database %s: %w", where, err)
		}
		tables = append(tables, t)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		db.Close()
		return nil, "", "", fmt.Errorf("typo3 database %s: %w", where, err)
	}
	if len(tables) > 0 {
		db.Close()
		return nil, "", "", &NotBenchDBError{Addr: where, What: "tables (" + strings.Join(first(tables, 5), ", ") + ")", TYPO3: true}
	}
	return db, d, sites, nil
}

// createTYPO3 creates the site text as TYPO3 rows (typo3.CreateDemo) in
// c.t3 and its site configuration in sites, and returns the installation
// as serve --typo3 opens it.
func (c *Cluster) createTYPO3(ctx context.Context, d typo3.Dialect, sites string, text []byte) (*live.TYPO3, error) {
	where := redact(c.cfg.TYPO3)
	if err := typo3.CreateDemo(ctx, c.t3, d, typo3.DemoConfig{Fixture: text}); err != nil {
		return nil, fmt.Errorf("typo3 database %s: %w", where, err)
	}
	if err := os.MkdirAll(sites, 0o755); err != nil {
		return nil, err
	}
	if err := typo3.WriteSite(sites, typo3Site); err != nil {
		return nil, err
	}
	inst, err := live.New(ctx, c.t3, d, sites, nil)
	if err != nil {
		return nil, fmt.Errorf("typo3 %s: %w", where, err)
	}
	return inst, nil
}

// importWaymarkPart imports what Waymark keeps itself of the site text
// beside TYPO3 (tokens, the configuration, the skill) into c.DB.
func (c *Cluster) importWaymarkPart(ctx context.Context, text []byte, opts *fixture.Options) error {
	doc, err := fixture.Decode(text, "bench.yaml")
	if err != nil {
		return err
	}
	return c.DB.InTx(ctx, func(tx *store.Tx) error {
		_, err := fixture.ImportTx(ctx, tx, time.Now(), opts, fixture.WaymarkPart(doc))
		return err
	})
}
