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
