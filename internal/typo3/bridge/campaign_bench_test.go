package bridge_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"waymark/internal/typo3/typo3test"
	"waymark/internal/waymarktest"
)

// benchCampaignTitle marks the parent page of the benchmark's page set, so
// that a run finds and removes what an interrupted run left behind.
const benchCampaignTitle = "Waymark campaign benchmark"

// BenchmarkCampaignAppliedBesideTYPO3 measures the product's figure "100
// selected cards applied in ≤ 10 s beside TYPO3": the TYPO3 user "editor"
// runs the demo's process "seo-optimieren" (offline model, 8 tours at once)
// as a campaign over N pages of a real TYPO3 13.4 — a parent page and N-1
// subpages made for the run (WAYMARK_BENCH_CAMPAIGN_PAGES, default 100) —
// then answers all N cards "apply" in one request. Timed: that request's
// response (s-response) and until TYPO3's database holds every proposed
// description, written through the extension by DataHandler (s-written).
// The campaign to its cards is reported apart (s-campaign) and not timed.
// The page set is made fresh on each run and removed at its end, so the
// shared installation holds after the run what it held before.
func BenchmarkCampaignAppliedBesideTYPO3(b *testing.B) {
	n := 100
	if v := os.Getenv("WAYMARK_BENCH_CAMPAIGN_PAGES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > 200 {
			b.Fatalf("WAYMARK_BENCH_CAMPAIGN_PAGES=%q: want 1 to 200 (one bulk answer takes at most 200 cards)", v)
		}
	}
	run := func(b *testing.B, r *typo3test.Real) {
		// The cap of open runs is above the campaign's pages: at the default
		// cap a campaign holds fewer tours at their cards than 100.
		bb := besideReal(b, r, waymarktest.Options{ChatWorkers: 8, MaxOpenRuns: 2 * n})
		importCampaignProcess(b, bb)
		pages := benchPageSet(b, r, seedOf(b, r).Root, bb.group, n)
		editor := bb.tokenOf(b, bb.editor, "editor")
		var response, written, campaign []time.Duration
		for b.Loop() {
			b.StopTimer()
			resetBenchPages(b, r, pages)
			t0 := time.Now()
			v := waymarktest.Decode[besideCampaign](b, editor.Must("POST", "/api/campaigns", map[string]any{
				"process": "seo-optimieren", "configuration": 10, "rootPage": pages[0], "depth": 1, "concurrency": 8}, 201))
			if v.Counts.Total != n {
				b.Fatalf("created: %+v, want the %d pages", v, n)
			}
			path := fmt.Sprintf("/api/campaigns/%d", v.ID)
			for deadline := time.Now().Add(10 * time.Minute); v.State != "done"; time.Sleep(200 * time.Millisecond) {
				if time.Now().After(deadline) {
					b.Fatalf("the campaign never finished: %+v", v)
				}
				v = waymarktest.Decode[besideCampaign](b, editor.Must("GET", path, nil, 200))
			}
			var cards []besideCard
			for {
				page := waymarktest.Decode[struct {
					Cards []besideCard
					Total int
				}](b, editor.Must("GET", fmt.Sprintf("%s/cards?offset=%d&limit=200", path, len(cards)), nil, 200))
				cards = append(cards, page.Cards...)
				if len(page.Cards) == 0 || len(cards) >= page.Total {
					break
				}
			}
			if len(cards) != n || v.Counts.Proposals != n {
				b.Fatalf("campaign %+v with %d cards, want a card for each of the %d pages", v.Counts, len(cards), n)
			}
			campaign = append(campaign, time.Since(t0))
			refs := make([]map[string]any, 0, n)
			want := map[int64]string{} // page → the description to be written
			for _, c := range cards {
				if len(c.Fields) != 1 || c.Fields[0].Field != "description" || c.Fields[0].Current != "Short." || c.Fields[0].Proposed == "" {
					b.Fatalf("card of page %d: %+v, want a description over %q", c.Page, c.Fields, "Short.")
				}
				refs = append(refs, map[string]any{"conversation": c.Conversation, "turnDigest": c.TurnDigest})
				want[c.Page] = c.Fields[0].Proposed
			}

			b.StartTimer()
			t1 := time.Now()
			res := editor.Must("POST", path+"/answers", map[string]any{"answer": "apply", "cards": refs}, 200)
			response = append(response, time.Since(t1))
			var answered struct {
				Results []struct{ Outcome, Code string }
			}
			if err := json.Unmarshal(res.Body, &answered); err != nil || len(answered.Results) != n {
				b.Fatalf("answers: %v %s", err, res.Body)
			}
			for i, x := range answered.Results {
				if x.Outcome != "answered" {
					b.Fatalf("card of page %d: %+v, want answered", cards[i].Page, x)
				}
			}
			for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
				now := benchDescriptions(b, r, pages)
				done := 0
				for p, d := range want {
					if now[p] == d {
						done++
					}
				}
				if done == n {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("TYPO3 holds %d of the %d applied descriptions after 5 minutes", done, n)
				}
			}
			written = append(written, time.Since(t1))
			b.StopTimer()
			// DataHandler wrote them as the editor (TYPO3's history), not the direct writer.
			var by []int64
			if err := json.Unmarshal([]byte(r.PHP(b, fmt.Sprintf(`$out = [];
				foreach ([%s] as $p) { $row = $GLOBALS['T3_CONTAINER']->get(\TYPO3\CMS\Core\Database\ConnectionPool::class)->getConnectionForTable('sys_history')
					->select(['userid'], 'sys_history', ['tablename' => 'pages', 'recuid' => $p], [], ['uid' => 'DESC'], 1)->fetchAssociative();
				  $out[] = (int)($row['userid'] ?? 0); }
				echo json_encode($out);`, joinUIDs(pages)))), &by); err != nil {
				b.Fatal(err)
			}
			for i, u := range by {
				if u != bb.editor {
					b.Fatalf("page %d last changed in TYPO3's history by user %d, want the editor %d", pages[i], u, bb.editor)
				}
			}
			b.StartTimer()
		}
		median := func(d []time.Duration) float64 {
			s := slices.Clone(d)
			slices.Sort(s)
			return s[len(s)/2].Seconds()
		}
		b.ReportMetric(float64(n), "cards")
		b.ReportMetric(median(campaign), "s-campaign")
		b.ReportMetric(median(response), "s-response")
		b.ReportMetric(median(written), "s-written")
		b.ReportMetric(median(written)*1000/float64(n), "ms-written/card")
	}
	b.Run("mariadb", func(b *testing.B) { run(b, typo3test.RealMariaDB(b)) })
	b.Run("postgres", func(b *testing.B) { run(b, typo3test.RealPostgres(b)) })
}

// benchPageSet makes, through DataHandler as TYPO3's administrator, a page
// under root and n-1 subpages of it that the group may edit, and returns
// their uids, the parent first. A set an earlier run left is removed first;
// the new one is removed when the benchmark ends.
func benchPageSet(b *testing.B, r *typo3test.Real, root, group int64, n int) []int64 {
	b.Helper()
	removeBenchPages(b, r)
	b.Cleanup(func() { removeBenchPages(b, r) })
	out := r.PHP(b, fmt.Sprintf(`$GLOBALS['BE_USER']->workspace = 0;
		$perm = ['hidden' => 0, 'perms_groupid' => %[1]d, 'perms_group' => 31, 'perms_user' => 31, 'perms_everybody' => 0, 'description' => 'Short.', 'seo_title' => ''];
		$dh = t3_dh(['pages' => ['NEW_p' => ['pid' => %[2]d, 'title' => '%[3]s', 'slug' => '/waymark-campaign-benchmark'] + $perm]]);
		if ($dh->errorLog) { echo implode('; ', $dh->errorLog); exit(1); }
		$parent = $dh->substNEWwithIDs['NEW_p']; $d = ['pages' => []];
		for ($i = %[4]d; $i >= 1; $i--) { $d['pages']['NEW_' . $i] = ['pid' => $parent, 'title' => 'Benchmark page ' . $i, 'slug' => '/waymark-campaign-benchmark/page-' . $i] + $perm; }
		$uids = [$parent];
		if ($d['pages']) { $dh = t3_dh($d); if ($dh->errorLog) { echo implode('; ', $dh->errorLog); exit(1); }
		  for ($i = 1; $i <= %[4]d; $i++) { $uids[] = $dh->substNEWwithIDs['NEW_' . $i]; } }
		echo json_encode($uids);`, group, root, benchCampaignTitle, n-1))
	var uids []int64
	if err := json.Unmarshal([]byte(out), &uids); err != nil || len(uids) != n {
		b.Fatalf("page set: %v %s", err, out)
	}
	return uids
}

// removeBenchPages deletes the benchmark's page set from TYPO3's database
// outright (a soft delete would leave rows the next run's slugs collide with).
func removeBenchPages(b *testing.B, r *typo3test.Real) {
	b.Helper()
	rows, err := r.DB.Query(r.Rebind("SELECT `uid` FROM `pages` WHERE `title` = ? AND `pid` > 0"), benchCampaignTitle)
	if err != nil {
		b.Fatal(err)
	}
	var parents []int64
	for rows.Next() {
		var uid int64
		if err := rows.Scan(&uid); err != nil {
			b.Fatal(err)
		}
		parents = append(parents, uid)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	rows.Close()
	for _, p := range parents {
		if _, err := r.DB.Exec(r.Rebind("DELETE FROM `pages` WHERE `uid` = ? OR `pid` = ?"), p, p); err != nil {
			b.Fatal(err)
		}
	}
}

// resetBenchPages gives every page of the set the short description the
// offline model improves, through DataHandler as the administrator.
func resetBenchPages(b *testing.B, r *typo3test.Real, pages []int64) {
	b.Helper()
	r.PHP(b, fmt.Sprintf(`$GLOBALS['BE_USER']->workspace = 0; $d = [];
		foreach ([%s] as $p) { $d['pages'][$p] = ['description' => 'Short.', 'seo_title' => '']; }
		$dh = t3_dh($d); if ($dh->errorLog) { echo implode('; ', $dh->errorLog); exit(1); }`, joinUIDs(pages)))
}

// benchDescriptions reads the pages' descriptions from TYPO3's database.
func benchDescriptions(b *testing.B, r *typo3test.Real, pages []int64) map[int64]string {
	b.Helper()
	rows, err := r.DB.Query(r.Rebind("SELECT `uid`, `description` FROM `pages` WHERE `uid` IN (" + joinUIDs(pages) + ")"))
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var uid int64
		var d *string
		if err := rows.Scan(&uid, &d); err != nil {
			b.Fatal(err)
		}
		if d != nil {
			out[uid] = *d
		}
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

func joinUIDs(uids []int64) string {
	s := make([]string, len(uids))
	for i, u := range uids {
		s[i] = strconv.FormatInt(u, 10)
	}
	return strings.Join(s, ",")
}
