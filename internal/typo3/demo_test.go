package typo3

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// query runs q (with ? placeholders rewritten for d) and returns its rows
// as text, one string per row with the columns joined by "|".
func query(t *testing.T, db *sql.DB, d Dialect, q string, args ...any) []string {
	t.Helper()
	if d == Postgres {
		n := 0
		var b strings.Builder
		for _, r := range q {
			if r == '?' {
				n++
				b.WriteString(d.placeholder(n))
				continue
			}
			b.WriteRune(r)
		}
		q = strings.ReplaceAll(b.String(), "`", `"`)
	}
	rs, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out []string
	for rs.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = v.String
			if !v.Valid {
				parts[i] = "NULL"
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func wantRows(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s =\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestCreateDemoFillsTYPO3TablesWithTheDemoSite(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		if err := CreateDemo(context.Background(), db, d, DemoConfig{Argon2: cheapArgon2, Now: now}); err != nil {
			t.Fatalf("CreateDemo = %v", err)
		}
		wantRows(t, "be_groups", query(t, db, d,
			"SELECT uid, title, hidden, deleted, subgroup, db_mountpoints, tables_select, tables_modify, non_exclude_fields, allowed_languages FROM be_groups ORDER BY uid"),
			"1|Editors|0|0||1|pages,tt_content|pages,tt_content|pages:description,pages:seo_title,pages:keywords|0,1",
			"2|Redaktion DE|0|0||3|pages,tt_content|pages,tt_content|pages:description,pages:seo_title|1",
			"3|Approvers|0|0|1||pages,tt_content|||",
			"4|Intranet team|0|0||20|pages,tt_content|pages,tt_content||0",
		)
		wantRows(t, "be_users", query(t, db, d,
			"SELECT uid, username, admin, disable, deleted, usergroup, db_mountpoints, options, allowed_languages, lang, starttime, endtime, tstamp FROM be_users ORDER BY uid"),
			"1|admin|1|0|0|||3||default|0|0|1772355600",
			"2|erika|0|0|0|1||3||de|0|0|1772355600",
			"3|max|0|0|0|2||3||de|0|0|1772355600",
			"4|paula|0|0|0|3||3||default|0|0|1772355600",
			"5|importer|0|0|0|1||3||default|0|0|1772355600",
		)
		for _, u := range []struct{ name, password string }{{"admin", "admin-demo-pass"}, {"erika", "erika-demo-pass"}, {"max", "max-demo-pass"}, {"paula", "paula-demo-pass"}} {
			hash := query(t, db, d, "SELECT password FROM be_users WHERE username = ?", u.name)[0]
			if !strings.HasPrefix(hash, "$argon2i$v=19$m=1024,t=1,p=1$") {
				t.Errorf("%s's password is stored as %q, want an argon2i PHC string", u.name, hash)
			}
			if ok, err := VerifyPassword(hash, u.password); !ok || err != nil {
				t.Errorf("VerifyPassword(%s's stored hash, demo password) = %v, %v", u.name, ok, err)
			}
		}
		if hash := query(t, db, d, "SELECT password FROM be_users WHERE username = 'importer'")[0]; hash != "" {
			t.Errorf("the service account has password %q, want none", hash)
		}
		wantRows(t, "pages", query(t, db, d,
			"SELECT uid, pid, sys_language_uid, l10n_parent, deleted, hidden, t3ver_wsid, perms_userid, perms_groupid, perms_user, perms_group, perms_everybody, title, seo_title, description, is_siteroot FROM pages WHERE uid IN (1, 3, 9, 14, 20) ORDER BY uid"),
			"1|0|0|0|0|0|0|1|1|31|27|1|Home|Nordlicht Digital – web agency in Hamburg|Web agency.|1",
			"3|1|0|0|0|0|0|1|2|31|27|1|Services|Services|What we do: websites, shops and consulting for medium-sized companies in northern Germany, from the first sketch to hosting and support.|0",
			"9|1|0|0|1|0|0|1|1|31|27|1|Summer campaign 2025||Old campaign page, deleted.|0",
			"14|3|1|4|0|0|0|1|2|31|27|1|Webentwicklung|||0",
			"20|0|0|0|0|0|0|1|4|31|27|0|Intranet|||1",
		)
		if n := query(t, db, d, "SELECT COUNT(*) FROM pages"); n[0] != "17" {
			t.Errorf("pages has %s rows, want the fixture's 17", n[0])
		}
		wantRows(t, "tt_content", query(t, db, d,
			"SELECT uid, pid, sys_language_uid, l18n_parent, deleted, `CType`, `colPos`, header, image FROM tt_content WHERE uid IN (100, 101, 102, 141) ORDER BY uid"),
			"100|1|0|0|0|text|0|Welcome|0",
			"101|1|1|100|0|text|0|Willkommen|0",
			"102|1|-1|0|0|image|0|Our office in Altona|1",
			"141|6|0|0|1|text|0|Old news|0",
		)
		wantRows(t, "images", query(t, db, d,
			"SELECT r.uid_foreign, r.fieldname, r.alternative, f.name FROM sys_file_reference r JOIN sys_file f ON f.uid = r.uid_local WHERE r.tablenames = 'tt_content' ORDER BY r.uid_foreign"),
			"102|image||office.jpg",
			"131|image|diagram|stack.png",
		)
		for _, table := range []string{"sys_history", "sys_log", "cache_pages", "cache_pages_tags"} {
			if n := query(t, db, d, "SELECT COUNT(*) FROM "+table); n[0] != "0" {
				t.Errorf("%s has %s rows, want an empty table", table, n[0])
			}
		}
	})
}

// TYPO3 itself inserts rows without naming uid; after the demo's explicit
// uids the next one must not collide.
func TestCreateDemoLeavesTheNextUIDFree(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		demoDB(t, db, d)
		if _, err := db.Exec("INSERT INTO pages (pid, title) VALUES (1, 'New page')"); err != nil {
			t.Fatalf("insert a page without uid: %v", err)
		}
		wantRows(t, "new page", query(t, db, d, "SELECT uid FROM pages WHERE title = 'New page'"), "22")
	})
}

func TestCreateDemoRefusesADatabaseWithTYPO3TablesAndChangesNothing(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		if _, err := db.Exec("CREATE TABLE pages (uid INTEGER PRIMARY KEY, title VARCHAR(255))"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE TABLE sys_log (uid INTEGER PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
		err := CreateDemo(context.Background(), db, d, DemoConfig{Argon2: cheapArgon2})
		if err == nil || err.Error() != "demo: the database is not empty: it has the TYPO3 table(s) pages, sys_log" {
			t.Fatalf("CreateDemo on a database with pages = %v", err)
		}
		own := "table_schema = DATABASE()"
		if d == Postgres {
			own = "table_schema = ANY (current_schemas(false))"
		}
		wantRows(t, "tables after the refusal",
			query(t, db, d, "SELECT table_name FROM information_schema.tables WHERE "+own+" ORDER BY table_name"),
			"pages", "sys_log")
	})
}

func TestDDLQuotesMixedCaseColumnsOnPostgreSQL(t *testing.T) {
	t.Parallel()
	stmts, err := DDL(Postgres)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(stmts, "\n")
	for _, want := range []string{`"CType" VARCHAR(255) DEFAULT '' NOT NULL`, `"colPos" INTEGER DEFAULT 0 NOT NULL`, `"perms_user" SMALLINT DEFAULT 0 NOT NULL`} {
		if !strings.Contains(all, want) {
			t.Errorf("PostgreSQL DDL lacks %s", want)
		}
	}
	if _, err := DDL("sqlite"); err == nil {
		t.Error("DDL(sqlite) succeeded")
	}
}

func TestWriteDemoSitesWritesConfigurationsLoadSitesReads(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "config", "sites")
	if err := WriteDemoSites(dir); err != nil {
		t.Fatal(err)
	}
	sites, err := LoadSites(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) != 2 || sites[0].Identifier != "intranet" || sites[1].RootPageID != 1 || len(sites[1].Languages) != 2 || sites[1].Languages[1].Code() != "de" ||
		sites[1].WebsiteTitle != "Nordlicht Digital" {
		t.Errorf("LoadSites(demo) = %+v", sites)
	}
}

func TestOpenRefusesBadAndUnreachableDSNsInOneLineWithoutThePassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		dsn, want string
		bad       bool // an error about the DSN itself, not the database
	}{
		{"root@localhost/typo3", "want mysql://user:password@host:port/database", true},
		{"sqlite:///var/typo3.db", "want mysql://", true},
		{"oracle://u:secret-pw@127.0.0.1/typo3", `scheme "oracle" is not mysql or postgres`, true},
		{"mysql://u:secret-pw@127.0.0.1:3306/", "the database name is missing", true},
		{"mysql://u:secret-pw@127.0.0.1:1/typo3", "does not answer", false},
		{"postgres://u:secret-pw@127.0.0.1:1/typo3?connect_timeout=5", "does not answer", false},
	} {
		db, _, err := Open(ctx, c.dsn)
		if err == nil {
			db.Close()
			t.Errorf("Open(%s) succeeded", c.dsn)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "secret-pw") || strings.Contains(msg, "\n") {
			t.Errorf("Open(%s) = %q, want one line with %q and no password", c.dsn, msg, c.want)
		}
		if errors.Is(err, ErrBadDSN) != c.bad {
			t.Errorf("Open(%s): errors.Is(ErrBadDSN) = %t, want %t", c.dsn, !c.bad, c.bad)
		}
	}
}
