package bench

import (
	"context"
	"sync"
	"time"

	"waymark/internal/store"
)

// commitRate is the raw commit rate of db: one-row INSERTs, each its own
// commit through the store, from n goroutines for d, in a scratch table
// dropped afterwards.
func commitRate(ctx context.Context, db *store.DB, n int, d time.Duration) (float64, error) {
	if _, err := db.Exec(ctx, "CREATE TABLE IF NOT EXISTS bench_baseline (n BIGINT NOT NULL)"); err != nil {
		return 0, err
	}
	defer db.Exec(context.WithoutCancel(ctx), "DROP TABLE bench_baseline") //nolint:errcheck // scratch table
	var (
		mu      sync.Mutex // guards commits and first
		commits int
		first   error
		wg      sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for i := range n {
		wg.Go(func() {
			k := 0
			var err error
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if _, err = db.Exec(ctx, "INSERT INTO bench_baseline (n) VALUES (?)", i); err != nil {
					break
				}
				k++
			}
			mu.Lock()
			commits += k
			if err != nil && first == nil {
				first = err
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return float64(commits) / time.Since(start).Seconds(), first
}
