package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// columns lists "table.column" of every table the migrations made, sorted;
// goose's bookkeeping and SQLite's internal tables are left out.
func columns(t *testing.T, db *store.DB) []string {
	t.Helper()
	ctx := context.Background()
	q := `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`
	if db.Dialect() == store.SQLite {
		q = `SELECT m.name, c.name FROM sqlite_master m, pragma_table_info(m.name) c
			WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`
	}
	rows, err := db.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		if table == "goose_db_version" {
			continue
		}
		out = append(out, strings.ToLower(table+"."+col))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// The two migration trees make the same tables with the same columns: one
// code path serves both dialects only while they agree.
func TestBothMigrationTreesMakeTheSameTablesAndColumns(t *testing.T) {
	lite := columns(t, storetest.SQLite(t))
	pg := columns(t, storetest.Postgres(t))
	onlyLite, onlyPG := difference(lite, pg), difference(pg, lite)
	if len(onlyLite)+len(onlyPG) > 0 {
		t.Errorf("schemas differ:\n only SQLite: %q\n only PostgreSQL: %q", onlyLite, onlyPG)
	}
	if len(lite) < 50 {
		t.Errorf("only %d columns read: the schema query found too little", len(lite))
	}
}

func difference(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}
