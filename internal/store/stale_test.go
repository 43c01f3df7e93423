package store_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Reads whose context ends at any moment — inside a statement, between a
// read scope's begin and its end, while rows are open — never leave a pooled
// connection inside an old snapshot: after them, every read sees the last
// committed write (the symptom looked for: a 404 right after a committed
// create, once in a CI run of the authorization matrix).
func TestCancelledReadsLeaveNoConnectionInAnOldSnapshot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (960, '0')`); err != nil {
			t.Fatal(err)
		}
		rounds := 400
		if testing.Short() {
			rounds = 100
		}
		var writer, readers sync.WaitGroup
		stop := make(chan struct{})
		writer.Go(func() { // a writer moving the row and the settings generation
			for i := 1; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := db.Exec(ctx, `UPDATE be_groups SET title = ? WHERE uid = 960`, strconv.Itoa(i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
		for g := range 6 {
			readers.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 1))
				for range rounds {
					c, cancel := context.WithTimeout(ctx, time.Duration(r.IntN(300))*time.Microsecond)
					switch r.IntN(4) {
					case 0:
						var s string
						_ = db.QueryRow(c, `SELECT title FROM be_groups WHERE uid = 960`).Scan(&s)
					case 1:
						_, _ = store.Generation(c, db)
					case 2:
						sc, end := db.ReadScope(c)
						var s string
						_ = db.QueryRow(sc, `SELECT title FROM be_groups WHERE uid = 960`).Scan(&s)
						_, _ = store.Generation(sc, db)
						end()
					case 3:
						if rows, err := db.Query(c, `SELECT uid, title FROM be_groups`); err == nil {
							rows.Next() // left open until the context ends, then closed
							time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond)
							rows.Close()
						}
					}
					cancel()
				}
			})
		}
		readers.Wait()
		close(stop)
		writer.Wait()
		if _, err := db.Exec(ctx, `UPDATE be_groups SET title = 'last' WHERE uid = 960`); err != nil {
			t.Fatal(err)
		}
		// Every pooled connection in turn, several at once.
		var rg sync.WaitGroup
		for range 8 {
			rg.Go(func() {
				for range 20 {
					var s string
					if err := db.QueryRow(ctx, `SELECT title FROM be_groups WHERE uid = 960`).Scan(&s); err != nil {
						t.Error(err)
						return
					}
					if s != "last" {
						t.Errorf("a read after the last commit saw %q, want last: a connection is inside an old snapshot", s)
						return
					}
				}
			})
		}
		rg.Wait()
	})
}
