package openpoint

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"waymark/internal/clock"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Size of the generated site of BenchmarkDashboard100k.
const (
	benchSections = 100       // root pages; each has benchPages/benchSections-1 children
	benchPages    = 10_000    // pages
	benchPoints   = 100_000   // open points, benchPoints/benchPages per page
	benchMounts   = 5         // sections the reader's group mounts: 5 % of the pages
	benchReader   = int64(77) // the editor reading the dashboard
	benchFieldSet = "title,navTitle,slug,seoTitle,description,keywords,ogTitle,ogDescription,ogImage,abstract"
)

// BenchmarkDashboard100k measures Visible(reader, 20) over 100,000 open points
// on 10,000 pages of which the reader may see 5 % (spread at random over the
// dates), beside a baseline of one primary-key SELECT on the same database.
func BenchmarkDashboard100k(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			db := storetest.Open(b, d)
			ctx := context.Background()
			benchSite(b, db)
			o := New(db, nil, nil, clock.Real{})
			got, err := o.Visible(ctx, benchReader, 20)
			if err != nil || len(got) != 20 {
				b.Fatalf("Visible = %d points, %v; want 20", len(got), err)
			}
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := o.Visible(ctx, benchReader, 20); err != nil {
					b.Fatal(err)
				}
			}
			dash := time.Since(start)
			b.StopTimer()
			n := max(b.N, 200)
			start = time.Now()
			for i := 0; i < n; i++ {
				var fields string
				if err := db.QueryRow(ctx, "SELECT fields FROM records WHERE tbl = 'pages' AND uid = ?", int64(1+i%benchPages)).Scan(&fields); err != nil {
					b.Fatal(err)
				}
			}
			base := time.Since(start)
			b.ReportMetric(float64(dash.Microseconds())/1000/float64(b.N), "ms/dashboard")
			b.ReportMetric(float64(base.Microseconds())/1000/float64(n), "ms/pk-select")
		})
	}
}

// benchSite generates the pages, the reader and the open points with
// multi-row INSERTs in one transaction, then updates the planner statistics.
func benchSite(b *testing.B, db *store.DB) {
	b.Helper()
	ctx := context.Background()
	fields := strings.Split(benchFieldSet, ",")
	mounts := make([]string, benchMounts)
	for i := range mounts {
		mounts[i] = fmt.Sprint(i + 1)
	}
	opExec(b, db, `INSERT INTO be_groups (uid, title, tables_select, tables_modify, non_exclude_fields, mounts) VALUES (1, 'Editors',
		'["pages"]', '["pages"]', ?, ?)`, `["pages:`+strings.Join(fields, `","pages:`)+`"]`, "["+strings.Join(mounts, ",")+"]")
	opExec(b, db, `INSERT INTO be_users (uid, username, group_uids) VALUES (?, 'editor', '[1]')`, benchReader)
	perChild := benchPages/benchSections - 1
	err := db.InTx(ctx, func(tx *store.Tx) error {
		var vals []string
		var args []any
		flush := func(q string) error {
			if len(vals) == 0 {
				return nil
			}
			_, err := tx.Exec(ctx, q+strings.Join(vals, ", "), args...)
			vals, args = vals[:0], args[:0]
			return err
		}
		const pagesQ = "INSERT INTO records (tbl, uid, pid, perms_everybody, fields) VALUES "
		for uid := int64(1); uid <= benchPages; uid++ {
			pid := int64(0)
			if uid > benchSections {
				pid = 1 + (uid-benchSections-1)/int64(perChild)
			}
			vals = append(vals, "('pages', ?, ?, 1, ?)")
			args = append(args, uid, pid, fmt.Sprintf(`{"title":"Page %d","description":"About page %d","seoTitle":""}`, uid, uid))
			if len(vals) == 500 {
				if err := flush(pagesQ); err != nil {
					return err
				}
			}
		}
		if err := flush(pagesQ); err != nil {
			return err
		}
		order := rand.New(rand.NewPCG(1, 2)).Perm(benchPages) // spreads the visible pages over the dates
		const pointsQ = "INSERT INTO open_points (skill_uid, page_uid, tbl, uid, field, language, created_at) VALUES "
		for i := 0; i < benchPoints; i++ {
			page := int64(order[i%benchPages] + 1)
			vals = append(vals, "(?, ?, 'pages', ?, ?, 0, ?)")
			args = append(args, int64(1+i%3), page, page, fields[(i/benchPages)%len(fields)], int64(1_700_000_000_000_000+i))
			if len(vals) == 1000 {
				if err := flush(pointsQ); err != nil {
					return err
				}
			}
		}
		return flush(pointsQ)
	})
	if err != nil {
		b.Fatalf("generate: %v", err)
	}
	opExec(b, db, "ANALYZE")
}
