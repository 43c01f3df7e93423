package openpoint_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"waymark/internal/clock"
	"waymark/internal/openpoint"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	"waymark/internal/tool"
)

// BenchmarkRecordAndCloseOnADecision measures what open points add to a
// decided card: recording a skip (one row per field) and closing by an
// applied complete write, on SQLite with 100,000 other points stored,
// beside a baseline of one empty-ish commit on the same database.
func BenchmarkRecordAndCloseOnADecision(b *testing.B) {
	db := storetest.SQLite(b)
	openpoint.BenchSite(b, db)
	ctx := context.Background()
	op := openpoint.New(db, nil, nil, clock.Real{})
	target := openpoint.Target{Table: "pages", UID: 42, Fields: []string{"description", "seoTitle"}}
	step := tool.WriteStep{Table: "pages", UID: 42, Fields: target.Fields, Completeness: tool.Complete}
	base := median(b, 500, func() error {
		return db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, "UPDATE records SET updated_at = updated_at WHERE tbl = 'pages' AND uid = 1")
			return err
		})
	})
	var record, close []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := op.RecordSkip(ctx, 9, 42, target); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		n, err := op.CloseApplied(ctx, target, step, true)
		if err != nil {
			b.Fatal(err)
		}
		if n < 2 {
			b.Fatalf("closed %d points, want the 2 just recorded", n)
		}
		record, close = append(record, t1.Sub(t0)), append(close, time.Since(t1))
	}
	b.StopTimer()
	b.ReportMetric(ms(mid(record)), "ms/record_median")
	b.ReportMetric(ms(mid(close)), "ms/close_median")
	b.ReportMetric(ms(base), "ms/commit_baseline")
}

func median(b *testing.B, n int, f func() error) time.Duration {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	return mid(ds)
}

func mid(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
