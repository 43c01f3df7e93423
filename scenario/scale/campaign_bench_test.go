package scale_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"waymark/internal/demo"
	"waymark/internal/fixture"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// Sizes of the campaign benchmark's site: a branch of benchPages pages with its root,
// below Home, none with a description, so that the offline model's tour
// of each proposes one; and a page of its own for the one-page campaign
// measured beside it.
const (
	benchRoot  = 20000
	benchPages = 1000
	benchAlone = 30000
)

// benchBranch is the benchmark's branch in the fixture format: pages like
// the demo's guide branch (one text element each), every description empty.
func benchBranch(b *testing.B) []byte {
	perms := map[string]int{"user": 31, "group": 27, "everybody": 1}
	page := func(uid, pid int64, title string) map[string]any {
		return map[string]any{"uid": uid, "pid": pid, "title": title, "language": 0, "owner": 1, "group": 1, "perms": perms,
			"fields": map[string]string{"seoTitle": "", "description": ""}}
	}
	text := func(uid, pid int64, title string) map[string]any {
		return map[string]any{"table": "tt_content", "uid": uid, "pid": pid, "language": 0, "fields": map[string]string{"CType": "text",
			"header": title, "bodytext": "Clients often ask us about " + title + ". Here we explain in plain words what it means for a website of a medium-sized company, what it costs and how we go about it in our projects."}}
	}
	pages := []map[string]any{page(benchRoot, 1, "Benchmark guide"), page(benchAlone, 1, "Benchmark page alone")}
	records := []map[string]any{text(100000, benchAlone, "page speed")}
	for i := int64(1); i < benchPages; i++ { // the root is one of the campaign's pages
		title := fmt.Sprintf("Question %d", i)
		pages = append(pages, page(benchRoot+i, benchRoot, title))
		records = append(records, text(100000+i, benchRoot+i, title))
	}
	raw, err := json.Marshal(map[string]any{"pages": pages, "records": records})
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// cpuTime is the CPU time (user and system) this process has used: the
// whole application runs in it, beside the benchmark's own client.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// commitBaseline is the mean time of one raw one-row commit, measured on
// db in the same run as the figures it stands beside.
func commitBaseline(b *testing.B, db *store.DB) time.Duration {
	ctx := b.Context()
	create := "CREATE TABLE IF NOT EXISTS bench_baseline (id INTEGER PRIMARY KEY, v BIGINT)"
	if db.Dialect() == store.Postgres {
		create = "CREATE TABLE IF NOT EXISTS bench_baseline (id BIGSERIAL PRIMARY KEY, v BIGINT)"
	}
	if _, err := db.Exec(ctx, create); err != nil {
		b.Fatal(err)
	}
	const n = 200
	start := time.Now()
	for i := range n {
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO bench_baseline (v) VALUES (?)", i)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start) / n
}

// runCampaign starts a campaign of the demo's SEO process over root (to
// depth) as erika and waits until no page is left to work, reading the
// items past the store's statement counter (db.SQL) so that the waiting
// costs the figures nothing. It returns the campaign's id and its cost:
// wall time, CPU time and statements.
func runCampaign(b *testing.B, e *wt.Env, root int64, depth int) (id int64, wall, cpu time.Duration, stmts int64) {
	db := e.DB
	stmts0, cpu0, t0 := db.Statements(), cpuTime(b), time.Now()
	v := wt.Decode[struct{ ID int64 }](b, e.As("demo-token-erika").Must("POST", "/api/campaigns", map[string]any{
		"process": "seo-optimieren", "rootPage": root, "depth": depth, "languages": []int64{0}, "concurrency": 8}, http.StatusCreated))
	deadline := time.Now().Add(30 * time.Minute)
	for {
		var left int
		if err := db.SQL.QueryRowContext(b.Context(), "SELECT COUNT(*) FROM campaign_items WHERE campaign_id = $1 AND state IN ('pending', 'running')", v.ID).Scan(&left); err != nil {
			b.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("campaign %d: %d pages left after 30 minutes", v.ID, left)
		}
		time.Sleep(20 * time.Millisecond) // polling the running application's rows
	}
	return v.ID, time.Since(t0), cpuTime(b) - cpu0, db.Statements() - stmts0
}

// stats are the median and the largest of ds.
func stats(ds []time.Duration) (median, most time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)-1]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// BenchmarkCampaign1000Pages: a campaign of the demo's "SEO optimieren"
// over 1,000 pages with the offline model, on SQLite and PostgreSQL —
// Waymark's own cost per page to the first card (CPU and statements),
// beside a one-page campaign and a raw commit measured in the same run;
// then every page of the review list of 1,000 cards, in the browser UI
// and through the API; then one answer applying 100 of the cards, until
// the 100 pages are written. Each figure is measured once per run: run
// it with -benchtime 1x (a larger b.N measures the list again and
// applies another 100 cards per iteration).
func BenchmarkCampaign1000Pages(b *testing.B) {
	for _, dialect := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(dialect), func(b *testing.B) {
			db := storetest.Open(b, dialect)
			// Each page's tour waits at its card as one of erika's open
			// runs: 1,000 waiting cards need `serve --max-open-runs` above
			// the default 100 (at the default, the pages past the 100th fail).
			e := wt.New(b, db, string(demo.Fixture), &wt.Options{Workers: 2, ChatWorkers: 8, MaxOpenRuns: 2 * benchPages})
			if _, err := fixture.Import(b.Context(), db, benchBranch(b), "bench.json", e.App.FixtureOptions()); err != nil {
				b.Fatal(err)
			}
			base := commitBaseline(b, db)
			var id int64
			b.Run("run", func(b *testing.B) {
				_, wall1, cpu1, stmts1 := runCampaign(b, e, benchAlone, 0)
				var wall, cpu time.Duration
				var stmts int64
				id, wall, cpu, stmts = runCampaign(b, e, benchRoot, 1)
				var cards int
				if err := db.SQL.QueryRowContext(b.Context(), "SELECT COUNT(*) FROM campaign_items WHERE campaign_id = $1 AND state = 'proposals'", id).Scan(&cards); err != nil {
					b.Fatal(err)
				}
				if cards != benchPages {
					var states []string
					rows, err := db.SQL.QueryContext(b.Context(), "SELECT state || ' ' || reason || ' ' || COUNT(*) FROM campaign_items WHERE campaign_id = $1 GROUP BY state, reason", id)
					if err != nil {
						b.Fatal(err)
					}
					for rows.Next() {
						var s string
						if err := rows.Scan(&s); err != nil {
							b.Fatal(err)
						}
						states = append(states, s)
					}
					if err := rows.Err(); err != nil {
						b.Fatal(err)
					}
					b.Fatalf("%d pages with proposals, want %d: %v", cards, benchPages, states)
				}
				b.ReportMetric(ms(cpu)/benchPages, "cpu_ms/page")
				b.ReportMetric(float64(stmts)/benchPages, "statements/page")
				b.ReportMetric(wall.Seconds(), "s_wall")
				b.ReportMetric(ms(cpu1), "cpu_ms/one_page_campaign")
				b.ReportMetric(float64(stmts1), "statements/one_page_campaign")
				b.ReportMetric(ms(wall1), "ms_wall/one_page_campaign")
				b.ReportMetric(ms(base), "ms/baseline_commit")
			})
			if id == 0 {
				b.Fatal("the campaign did not run")
			}
			erika := e.As("demo-token-erika")
			// listPages reads every page of the review list through path
			// (with the offset appended) and reports the time and
			// statements of one page.
			listPages := func(b *testing.B, name, path string, size int, check func([]byte) bool) {
				var times []time.Duration
				var stmts []int64
				for b.Loop() {
					for off := 0; off < benchPages; off += size {
						s0, t0 := db.Statements(), time.Now()
						r := erika.Must("GET", fmt.Sprintf("%s&offset=%d", path, off), nil, http.StatusOK)
						times, stmts = append(times, time.Since(t0)), append(stmts, db.Statements()-s0)
						if !check(r.Body) {
							b.Fatalf("%s at offset %d: %.300s", path, off, r.Body)
						}
					}
				}
				median, most := stats(times)
				b.ReportMetric(ms(median), "ms/"+name+"_median")
				b.ReportMetric(ms(most), "ms/"+name+"_max")
				b.ReportMetric(float64(slices.Max(stmts)), "statements/"+name)
				b.ReportMetric(ms(base), "ms/baseline_commit")
			}
			apiCards := func(size int) func([]byte) bool {
				return func(body []byte) bool {
					var page struct {
						Cards []json.RawMessage
						Total int
					}
					return json.Unmarshal(body, &page) == nil && page.Total == benchPages && len(page.Cards) == size
				}
			}
			b.Run("list-web-20", func(b *testing.B) {
				listPages(b, "list_page", fmt.Sprintf("/campaigns/%d?", id), 20, func(body []byte) bool {
					return strings.Count(string(body), `name="card"`) == 20
				})
			})
			b.Run("list-api-50", func(b *testing.B) {
				listPages(b, "list_page", fmt.Sprintf("/api/campaigns/%d/cards?limit=50", id), 50, apiCards(50))
			})
			b.Run("list-api-200", func(b *testing.B) {
				listPages(b, "list_page", fmt.Sprintf("/api/campaigns/%d/cards?limit=200", id), 200, apiCards(200))
			})
			b.Run("apply-100", func(b *testing.B) {
				for b.Loop() {
					list := wt.Decode[struct {
						Cards []struct {
							Conversation int64
							TurnDigest   string
							Page         int64
						}
					}](b, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d/cards?limit=100", id), nil, http.StatusOK))
					if len(list.Cards) != 100 {
						b.Fatalf("%d cards left, want 100", len(list.Cards))
					}
					refs, pages := []map[string]any{}, []string{}
					for _, c := range list.Cards {
						refs = append(refs, map[string]any{"conversation": c.Conversation, "turnDigest": c.TurnDigest})
						pages = append(pages, fmt.Sprint(c.Page))
					}
					s0, cpu0, t0 := db.Statements(), cpuTime(b), time.Now()
					res := wt.Decode[struct{ Results []struct{ Outcome string } }](b, erika.Must("POST", fmt.Sprintf("/api/campaigns/%d/answers", id),
						map[string]any{"answer": "apply", "cards": refs}, http.StatusOK))
					answered := time.Since(t0)
					for _, r := range res.Results {
						if r.Outcome != "answered" {
							b.Fatalf("results: %+v, want every card answered", res.Results)
						}
					}
					// Written: the page's description is no longer empty.
					q := "SELECT COUNT(*) FROM records WHERE tbl = 'pages' AND uid IN (" + strings.Join(pages, ",") + ") AND fields NOT LIKE '%\"description\":\"\"%'"
					deadline := time.Now().Add(5 * time.Minute)
					for {
						var n int
						if err := db.SQL.QueryRowContext(b.Context(), q).Scan(&n); err != nil {
							b.Fatal(err)
						}
						if n == len(pages) {
							break
						}
						if time.Now().After(deadline) {
							b.Fatalf("%d of %d pages written after 5 minutes", n, len(pages))
						}
						time.Sleep(10 * time.Millisecond) // polling the running application's rows
					}
					written := time.Since(t0)
					b.ReportMetric(answered.Seconds(), "s/answer_of_100")
					b.ReportMetric(written.Seconds(), "s/100_written")
					b.ReportMetric(ms(cpuTime(b)-cpu0)/100, "cpu_ms/card")
					b.ReportMetric(float64(db.Statements()-s0)/100, "statements/card")
					b.ReportMetric(ms(base), "ms/baseline_commit")
				}
			})
		})
	}
}
