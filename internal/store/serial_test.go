package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// The job queue's pool shares InTx's write mutex on SQLite: a queue write
// transaction makes InTx wait in Go (not in SQLite's busy handler) until it
// commits, and the queue's reads never wait.
func TestQueuePoolWritesQueueWithTheRuntimesWrites(t *testing.T) {
	db := storetest.SQLite(t)
	ctx := context.Background()
	if _, err := db.Exec(ctx, "CREATE TABLE serial_probe (id INTEGER PRIMARY KEY, who TEXT)"); err != nil {
		t.Fatal(err)
	}
	qp := db.QueuePool()
	if qp == db.SQL {
		t.Fatal("SQLite queue pool is the main pool")
	}
	qtx, err := qp.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := qtx.Exec("INSERT INTO serial_probe (who) VALUES ('queue')"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO serial_probe (who) VALUES ('runtime')")
			return err
		})
	}()
	// A read-only transaction and a plain read on the queue pool go on meanwhile.
	rtx, err := qp.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := rtx.QueryRow("SELECT COUNT(*) FROM serial_probe").Scan(&n); err != nil || n != 0 {
		t.Fatalf("read during the queue's write = %d, %v", n, err)
	}
	rtx.Rollback()
	select {
	case err := <-done:
		t.Fatalf("InTx finished while the queue's transaction was open: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := qtx.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("InTx after the queue's commit: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("InTx still waits after the queue's commit")
	}
	var order string
	if err := db.QueryRow(ctx, "SELECT group_concat(who, ',') FROM (SELECT who FROM serial_probe ORDER BY id)").Scan(&order); err != nil || order != "queue,runtime" {
		t.Fatalf("rows = %q, %v", order, err)
	}
	// A rolled-back queue transaction releases the mutex too.
	qtx, err = qp.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	qtx.Rollback()
	if _, err := db.Exec(ctx, "DELETE FROM serial_probe"); err != nil {
		t.Fatal(err)
	}
}

func TestQueuePoolOnPostgresIsTheMainPool(t *testing.T) {
	db := storetest.Postgres(t)
	if db.QueuePool() != db.SQL {
		t.Fatal("PostgreSQL queue pool differs from the main pool")
	}
}

// A connection keeps the statement of a query sent unprepared and runs the
// query again from it: results stay right when the same query is opened
// again while its rows are still open, and after the table's schema changed.
func TestAConnectionRerunsUnpreparedQueriesFromItsStatements(t *testing.T) {
	db := storetest.SQLite(t)
	ctx := context.Background()
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"CREATE TABLE kept (id INTEGER PRIMARY KEY, v TEXT)", "INSERT INTO kept (v) VALUES ('a'), ('b')"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	const q = "SELECT v FROM kept WHERE id >= ? ORDER BY id"
	read := func(rows *sql.Rows) []string {
		t.Helper()
		var out []string
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	outer, err := conn.QueryContext(ctx, q, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !outer.Next() {
		t.Fatal("no first row")
	}
	inner, err := conn.QueryContext(ctx, q, 2) // the kept statement is busy: runs on its own
	if err != nil {
		t.Fatal(err)
	}
	if got := read(inner); len(got) != 1 || got[0] != "b" {
		t.Errorf("inner rows = %v", got)
	}
	var first string
	if err := outer.Scan(&first); err != nil || first != "a" {
		t.Fatalf("outer first = %q, %v", first, err)
	}
	if rest := read(outer); len(rest) != 1 || rest[0] != "b" {
		t.Errorf("outer rest = %v", rest)
	}
	for i := 0; i < 3; i++ {
		rows, err := conn.QueryContext(ctx, q, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := read(rows); len(got) != 2 {
			t.Errorf("run %d = %v", i, got)
		}
	}
	columns := func() []string {
		t.Helper()
		rows, err := conn.QueryContext(ctx, "SELECT * FROM kept ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		return cols
	}
	if cols := columns(); len(cols) != 2 {
		t.Fatalf("columns = %v", cols)
	}
	if _, err := conn.ExecContext(ctx, "ALTER TABLE kept ADD COLUMN w TEXT NOT NULL DEFAULT 'x'"); err != nil {
		t.Fatal(err)
	}
	if cols := columns(); len(cols) != 3 { // the kept statement of SELECT * sees the new column
		t.Errorf("columns after ALTER = %v", cols)
	}
}
