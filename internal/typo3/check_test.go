package typo3

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCheckReportsAUsableDemoInstallation(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		demoDB(t, db, d)
		sites := filepath.Join(t.TempDir(), "sites")
		if err := WriteDemoSites(sites); err != nil {
			t.Fatal(err)
		}
		r, err := Check(context.Background(), db, d, sites, dirNow.Unix())
		if err != nil || !r.OK() {
			t.Fatalf("Check = %+v, %v", r, err)
		}
		want := []string{
			"sys_log.channel exists: TYPO3 12 or later",
			"pages.seo_title exists: the core extension seo is installed",
			`site intranet "Nordlicht Digital Intranet": root page 20, 0 English (en_US.UTF-8)`,
			`site nordlicht "Nordlicht Digital": root page 1, 0 English (en_US.UTF-8); 1 Deutsch (de_DE.UTF-8)`,
			"backend users: 5 active (1 admins), 4 can log in to Waymark, 1 without password",
			"can log in to Waymark: admin, erika, max, paula",
		}
		if got := r.Lines(); !reflect.DeepEqual(got, want) {
			t.Errorf("Check lines =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	})
}

func TestCheckNamesMissingTablesColumnsSitesAndUnsupportedHashes(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		demoDB(t, db, d)
		run(t, db, d, "DROP TABLE `cache_pages_tags`")
		run(t, db, d, "ALTER TABLE `pages` DROP COLUMN `seo_title`")
		run(t, db, d, "UPDATE `be_users` SET `password` = '$P$C6RmB5q1GJ3mGhNDbnCgXBpgFZ4XxD/' WHERE `uid` IN (2, 3)")
		run(t, db, d, "UPDATE `be_users` SET `password` = '5f4dcc3b5aa765d61d8327deb882cf99', `endtime` = 1 WHERE `uid` = 4")
		missing := filepath.Join(t.TempDir(), "config", "sites")
		r, err := Check(context.Background(), db, d, missing, dirNow.Unix())
		if err != nil {
			t.Fatal(err)
		}
		if r.OK() {
			t.Error("Check.OK() = true with a missing table")
		}
		want := []string{
			"missing table: cache_pages_tags",
			"missing column: pages.seo_title",
			"sys_log.channel exists: TYPO3 12 or later",
			"sites: site configurations: " + missing + " does not exist",
		}
		if got := r.Lines(); !reflect.DeepEqual(got, want) {
			t.Errorf("Check lines =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		run(t, db, d, "CREATE TABLE `cache_pages_tags` (`identifier` VARCHAR(250), `tag` VARCHAR(250))")
		r, err = Check(context.Background(), db, d, missing, dirNow.Unix())
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Join(r.Lines(), "\n")
		for _, w := range []string{
			"backend users: 4 active (1 admins), 1 can log in to Waymark, 1 without password",
			"can log in to Waymark: admin\n",
			"unsupported password hash phpass ($P$): 2 users (they log in to TYPO3 once to get rehashed)",
		} {
			if !strings.Contains(lines, w) {
				t.Errorf("Check lines lack %q:\n%s", w, lines)
			}
		}
		if strings.Contains(lines, "md5") {
			t.Errorf("Check counts the expired user's hash:\n%s", lines)
		}
	})
}

// Every column Check requires is one the schema creates.
func TestCheckRequiresOnlyColumnsOfTheSchema(t *testing.T) {
	t.Parallel()
	for _, tb := range schema() {
		cols := map[string]bool{}
		for _, c := range tb.columns {
			cols[c.name] = true
		}
		for _, c := range requiredColumns[tb.name] {
			if !cols[c] {
				t.Errorf("required column %s.%s is not in the schema", tb.name, c)
			}
		}
	}
	if len(requiredColumns) != len(schema()) {
		t.Errorf("requiredColumns names %d tables, the schema %d", len(requiredColumns), len(schema()))
	}
}
