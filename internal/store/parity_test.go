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

// typedColumns maps "table.column" of every table store.Migrate made to its
// type, mapped coarsely (coarseType), and " not null" when the column
// refuses NULL (a primary key counts: SQLite's rowid alias takes no NULL
// either): SQLite keeps a column's declared type, PostgreSQL its own name
// for it. River's tables (river_job, …) are not
// among them on either dialect: queue.Migrate makes those, from River's own
// migrations, and the queue's tests cover them.
func typedColumns(t *testing.T, db *store.DB) map[string]string {
	t.Helper()
	q := `SELECT table_name, column_name, data_type, is_nullable = 'NO' FROM information_schema.columns
		WHERE table_schema = current_schema()`
	if db.Dialect() == store.SQLite {
		q = `SELECT m.name, c.name, c.type, c."notnull" <> 0 OR c.pk <> 0 FROM sqlite_master m, pragma_table_info(m.name) c
			WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`
	}
	rows, err := db.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var table, col, typ string
		var notNull bool
		if err := rows.Scan(&table, &col, &typ, &notNull); err != nil {
			t.Fatal(err)
		}
		if table == "goose_db_version" || strings.HasPrefix(table, "river_") {
			continue
		}
		c := coarseType(t, table+"."+col, typ)
		if notNull {
			c += " not null"
		}
		out[strings.ToLower(table+"."+col)] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// coarseType maps a column type of either dialect to the class the code
// reads it as: int (SQLite's INTEGER and BIGINT are one 64-bit storage
// class; PostgreSQL's integer and bigint both scan into int64), text,
// bool, blob, real. An unknown type fails the test, so that a new one is
// mapped on purpose.
func coarseType(t *testing.T, column, typ string) string {
	t.Helper()
	switch strings.ToLower(strings.TrimSpace(typ)) {
	case "integer", "int", "bigint", "smallint", "int4", "int8":
		return "int"
	case "text", "character varying", "varchar":
		return "text"
	case "boolean", "bool":
		return "bool"
	case "bytea", "blob":
		return "blob"
	case "double precision", "real":
		return "real"
	}
	t.Errorf("%s: type %q has no coarse class in coarseType", column, typ)
	return typ
}

// intendedTypeDifferences are the columns whose coarse type differs between
// the trees on purpose, with the reason. None today.
var intendedTypeDifferences = map[string]string{}

// The two migration trees give every column the same coarse type and the
// same NOT NULL: code that scans a column into one Go type,
// and that relies on a column never being NULL, works on both.
func TestBothMigrationTreesGiveEveryColumnTheSameTypeAndNullability(t *testing.T) {
	lite := typedColumns(t, storetest.SQLite(t))
	pg := typedColumns(t, storetest.Postgres(t))
	var differ []string
	for col, lt := range lite {
		pt, ok := pg[col]
		if !ok || pt == lt {
			continue // a missing column is TestBothMigrationTreesMakeTheSameTablesAndColumns's
		}
		if _, intended := intendedTypeDifferences[col]; intended {
			continue
		}
		differ = append(differ, col+": SQLite "+lt+", PostgreSQL "+pt)
	}
	slices.Sort(differ)
	if len(differ) > 0 {
		t.Errorf("%d columns differ in type:\n %s", len(differ), strings.Join(differ, "\n "))
	}
	for col := range intendedTypeDifferences {
		if lite[col] == pg[col] {
			t.Errorf("%s is listed as an intended difference but agrees: remove it from the list", col)
		}
	}
	if len(lite) < 50 {
		t.Errorf("only %d columns read: the schema query found too little", len(lite))
	}
}
