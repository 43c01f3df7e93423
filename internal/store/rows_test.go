package store_test

import (
	"context"
	"slices"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestCollectReadsEveryRowInOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		got, err := store.Collect(ctx, db, store.Column[int64], "SELECT 3 UNION ALL SELECT 1 UNION ALL SELECT 2")
		if err != nil || !slices.Equal(got, []int64{3, 1, 2}) {
			t.Errorf("Collect = %v, %v; want [3 1 2]", got, err)
		}
		none, err := store.Collect(ctx, db, store.Column[int64], "SELECT 1 WHERE 1 = 0")
		if err != nil || none == nil || len(none) != 0 {
			t.Errorf("Collect without rows = %#v, %v; want an empty, non-nil list", none, err)
		}
	})
}

// A statement that fails after its first row must not read as a short list.
func TestCollectReportsAnErrorAfterTheFirstRow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		q := "SELECT 1 UNION ALL SELECT abs(-9223372036854775807 - 1)" // SQLite: integer overflow at the second row
		if db.Dialect() == store.Postgres {
			q = "SELECT 10 / (3 - g) FROM generate_series(1, 5) AS g" // division by zero at the third row
		}
		got, err := store.Collect(context.Background(), db, store.Column[int64], q)
		if err == nil {
			t.Errorf("Collect of a failing statement = %v, nil; want the error", got)
		}
	})
}
