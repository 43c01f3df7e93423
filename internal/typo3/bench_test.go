package typo3

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// benchDialects runs fn on a demo database of each dialect.
func benchDialects(b *testing.B, fn func(b *testing.B, db *sql.DB, d Dialect)) {
	for _, c := range []struct {
		name string
		open func(testing.TB) *sql.DB
		d    Dialect
	}{{"mariadb", mariaDB, MariaDB}, {"postgres", postgresDB, Postgres}} {
		b.Run(c.name, func(b *testing.B) {
			db := c.open(b)
			if err := CreateDemo(context.Background(), db, c.d, DemoConfig{Argon2: cheapArgon2}); err != nil {
				b.Fatal(err)
			}
			fn(b, db, c.d)
		})
	}
}

// One approved change written back with history, log and cache flush.
func BenchmarkWriterApply(b *testing.B) {
	benchDialects(b, func(b *testing.B, db *sql.DB, d Dialect) {
		w, _ := NewWriter(db, d, nil)
		ctx := context.Background()
		old := ""
		i := 0
		start := time.Now()
		for b.Loop() {
			i++
			next := fmt.Sprintf("Description %d", i)
			res, err := w.Apply(ctx, Change{Table: "pages", UID: 2, Field: "description", Old: old, New: next, UserID: 2, Key: fmt.Sprint("bench-", i)})
			if err != nil || !res.Applied {
				b.Fatalf("Apply = %+v, %v", res, err)
			}
			old = next
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
	})
}
