package store

import (
	"context"
	"database/sql/driver"
	"path/filepath"
	"slices"
	"testing"
)

// A query is one statement unless something other than space and comments
// follows a ';' outside comments, strings and quoted names; the parameters
// bound to LIMIT and OFFSET are found by number, position or name.
func TestShapeOfTellsOneStatementAndTheLimitParameters(t *testing.T) {
	for _, c := range []struct {
		q     string
		multi bool
		fixed []param
	}{
		{q: "SELECT 1"},
		{q: "SELECT 1;"},
		{q: "SELECT 1; -- done\n  "},
		{q: "-- one; two\nSELECT 1"},
		{q: "/* a; b */ SELECT ';', \"x;y\", [z;] FROM t"},
		{q: "SELECT 'it''s; fine'"},
		{q: "SELECT 1; SELECT 2", multi: true},
		{q: "CREATE TABLE a (x); CREATE TABLE b (y)", multi: true},
		{q: "SELECT v FROM t WHERE a = ? LIMIT ?", fixed: []param{{ordinal: 2}}},
		{q: "SELECT v FROM t WHERE a = ?2 AND b = ?1 LIMIT ?5", fixed: []param{{ordinal: 5}}},
		{q: "SELECT v FROM t LIMIT ? OFFSET ?", fixed: []param{{ordinal: 1}, {ordinal: 2}}},
		{q: "SELECT v FROM t LIMIT @max - 1", fixed: []param{{name: "max"}}},
		{q: "SELECT v FROM t WHERE x = 'LIMIT ?' AND y = ?", fixed: nil},
		{q: "SELECT limit_col FROM t WHERE a = ?"},
	} {
		sh := shapeOf(c.q)
		if sh.multi != c.multi || !slices.Equal(sh.fixed, c.fixed) {
			t.Errorf("shapeOf(%q) = multi %v, fixed %v; want %v, %v", c.q, sh.multi, sh.fixed, c.multi, c.fixed)
		}
	}
}

// A connection keeps the statement of a query with a ';' in a comment (the
// job queue's completion has one) and one statement per LIMIT value (SQLite
// compiles the value in and would compile the statement again at each new
// value); the answers follow the values bound.
func TestAConnectionKeepsOneStatementPerLimitValueAndQueriesWithCommentedSemicolons(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "kept.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !db.FastPaths() {
		t.Skipf("%s=1: no kept statements", EnvNoFastPaths)
	}
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"CREATE TABLE n (id INTEGER PRIMARY KEY)", "INSERT INTO n (id) VALUES (1), (2), (3), (4)"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	count := func(q string, args ...any) int {
		t.Helper()
		rows, err := conn.QueryContext(ctx, q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	kept := func() []string {
		t.Helper()
		var keys []string
		if err := conn.Raw(func(dc any) error {
			for k := range dc.(*serialConn).stmts {
				keys = append(keys, k)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	before := len(kept())
	const limited = "SELECT id FROM n WHERE id >= ? ORDER BY id LIMIT ?"
	for _, c := range []struct{ from, limit, want int }{{1, 1, 1}, {1, 3, 3}, {2, 1, 1}, {1, 3, 3}, {3, 5, 2}} {
		if got := count(limited, c.from, c.limit); got != c.want {
			t.Errorf("from %d limit %d: %d rows, want %d", c.from, c.limit, got, c.want)
		}
	}
	const commented = "SELECT id FROM n -- the first; then the rest\nWHERE id > ?"
	if got := count(commented, 2); got != 2 {
		t.Errorf("commented query: %d rows, want 2", got)
	}
	if got := count(commented, 3); got != 1 {
		t.Errorf("commented query again: %d rows, want 1", got)
	}
	var limitStmts, commentStmts int
	for _, k := range kept() {
		switch {
		case len(k) > len(limited) && k[:len(limited)] == limited:
			limitStmts++
		case k == commented:
			commentStmts++
		}
	}
	if limitStmts != 3 || commentStmts != 1 || len(kept()) != before+4 {
		t.Errorf("kept %d statements of the limited query (want 3: limits 1, 3, 5), %d of the commented one (want 1), %d new in all (want 4)",
			limitStmts, commentStmts, len(kept())-before)
	}
}

// stmtKey tells the values bound to the fixed parameters apart, by ordinal
// and by name.
func TestStmtKeyDiffersByTheFixedValuesOnly(t *testing.T) {
	sh := shapeOf("SELECT v FROM t WHERE a = ? LIMIT ?")
	k := func(a, l any) string {
		return sh.stmtKey("q", []driver.NamedValue{{Ordinal: 1, Value: a}, {Ordinal: 2, Value: l}})
	}
	if k(1, 5) != k(2, 5) || k(1, 5) == k(1, 6) {
		t.Errorf("keys: %q %q %q", k(1, 5), k(2, 5), k(1, 6))
	}
	named := shapeOf("SELECT v FROM t LIMIT @max")
	if a, b := named.stmtKey("q", []driver.NamedValue{{Name: "max", Value: 3}}), named.stmtKey("q", []driver.NamedValue{{Name: "max", Value: 4}}); a == b {
		t.Errorf("named keys equal: %q", a)
	}
}
