package live_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"waymark/internal/access"
	"waymark/internal/app"
	"waymark/internal/content"
	"waymark/internal/demo"
	"waymark/internal/store/storetest"
	"waymark/internal/typo3"
	"waymark/internal/typo3/live"
	"waymark/internal/typo3/typo3test"
	"waymark/internal/waymarktest"
)

// The content source and the user directory are handed to the application
// where it is wired, not looked up by its database: two applications on
// the same Waymark database in one process, one beside TYPO3 and one on the
// built-in source, each read their own pages and users at the same time.
// (A registry keyed by the database would give both the source attached
// last.)
func TestTwoApplicationsOnOneDatabaseEachReadTheirOwnSource(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		sites := t.TempDir()
		if err := typo3.WriteDemoSites(sites); err != nil {
			t.Fatal(err)
		}
		inst, err := live.New(context.Background(), t3.DB, t3.Dialect, sites, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := &source{name: string(t3.Dialect), t3: t3.DB, d: t3.Dialect}
		// The demo in Waymark's own tables (pages, users, their tokens),
		// then TYPO3's copy of it changed: another title of page 2, and
		// erika disabled there.
		db := storetest.SQLite(t)
		builtin := waymarktest.New(t, db, string(demo.Fixture), &waymarktest.Options{APIOnly: true})
		beside := waymarktest.New(t, db, "", &waymarktest.Options{APIOnly: true, TYPO3: inst})
		s.t3exec(t, "UPDATE `pages` SET `title` = 'About, as TYPO3 has it' WHERE `uid` = 2")
		s.t3exec(t, "UPDATE `be_users` SET `disable` = 1 WHERE `username` = 'erika'")

		for range 2 { // interleaved: neither application's reads move the other's
			r := builtin.As("demo-token-erika").Must("GET", "/api/pages/2/preview?language=0", nil, 200)
			if !contains(string(r.Body), `"About"`) || contains(string(r.Body), "as TYPO3 has it") {
				t.Errorf("%s: the built-in application's preview of page 2 = %s, want Waymark's title About", s.name, r.Body)
			}
			builtin.As("demo-token-erika").Must("GET", "/api/me", nil, 200)
			beside.As("demo-token-erika").Must("GET", "/api/me", nil, 401) // disabled in TYPO3

			r = beside.As("demo-token-admin").Must("GET", "/api/pages/2/preview?language=0", nil, 200)
			if !contains(string(r.Body), "About, as TYPO3 has it") {
				t.Errorf("%s: the application beside TYPO3 previews page 2 as %s, want TYPO3's title", s.name, r.Body)
			}
			r = builtin.As("demo-token-admin").Must("GET", "/api/pages/2/preview?language=0", nil, 200)
			if contains(string(r.Body), "as TYPO3 has it") {
				t.Errorf("%s: the built-in application's preview of page 2 for admin = %s, want Waymark's title", s.name, r.Body)
			}
		}
		if builtin.App.Source == beside.App.Source || builtin.App.Directory == beside.App.Directory {
			t.Errorf("%s: both applications were handed the same source or directory", s.name)
		}
	})
}

// Beside TYPO3 the source and the directory are TYPO3's: an application
// configured with TYPO3 and with a source or directory of its own is
// refused with a message naming both, before anything is wired.
func TestAnApplicationBesideTYPO3WithASourceOfItsOwnIsRefused(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		sites := t.TempDir()
		if err := typo3.WriteDemoSites(sites); err != nil {
			t.Fatal(err)
		}
		inst, err := live.New(context.Background(), t3.DB, t3.Dialect, sites, nil)
		if err != nil {
			t.Fatal(err)
		}
		db := storetest.SQLite(t)
		for name, cfg := range map[string]app.Config{
			"source":    {Key: bytes.Repeat([]byte{7}, 32), TYPO3: inst, Source: content.Builtin{}},
			"directory": {Key: bytes.Repeat([]byte{7}, 32), TYPO3: inst, Directory: access.BuiltinDirectory{}},
		} {
			a, err := app.New(context.Background(), db, &cfg)
			if err == nil {
				a.Close()
			}
			if err == nil || !strings.Contains(err.Error(), "set TYPO3 or them, not both") {
				t.Errorf("%s: app.New with TYPO3 and a %s of its own = %v, want refused", t3.Dialect, name, err)
			}
		}
	})
}
