package scenario_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"waymark/internal/demo"
	"waymark/internal/fixture"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	"waymark/internal/typo3"
	"waymark/internal/typo3/live"
	"waymark/internal/typo3/typo3test"
	wt "waymark/internal/waymarktest"
)

// Writing back into TYPO3: the approved card of a tour updates the TYPO3 row
// and its tstamp, adds the sys_history row TYPO3's record history shows and
// a sys_log entry, and flushes the page's page cache entries — against TYPO3
// on MariaDB and on PostgreSQL (Waymark's own database: SQLite).

const erikaUID = 2 // erika in the demo site, in Waymark and in TYPO3

// typo3Writer is a writer into t3 stamping with the real clock.
func typo3Writer(t testing.TB, db *sql.DB, d typo3.Dialect) *typo3.Writer {
	t.Helper()
	w, err := typo3.NewWriter(db, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// t3q rebinds ? to $n for PostgreSQL and quotes nothing: the test queries
// name lower-case columns only.
func t3q(d typo3.Dialect, q string) string {
	if d != typo3.Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func t3Value(t testing.TB, db *sql.DB, d typo3.Dialect, q string, args ...any) string {
	t.Helper()
	var v sql.NullString
	if err := db.QueryRow(t3q(d, q), args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v.String
}

func t3Count(t testing.TB, db *sql.DB, d typo3.Dialect, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(t3q(d, q), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// seedPageCache puts a cached page entry tagged pageId_<page> into TYPO3's
// page cache, as the frontend leaves one.
func seedPageCache(t testing.TB, db *sql.DB, d typo3.Dialect, page int64) {
	t.Helper()
	id := fmt.Sprintf("cached-%d", page)
	if _, err := db.Exec(t3q(d, "INSERT INTO cache_pages (identifier, expires, content) VALUES (?, ?, ?)"), id, time.Now().Add(time.Hour).Unix(), "<html>"); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{fmt.Sprintf("pageId_%d", page), "pages"} {
		if _, err := db.Exec(t3q(d, "INSERT INTO cache_pages_tags (identifier, tag) VALUES (?, ?)"), id, tag); err != nil {
			t.Fatal(err)
		}
	}
}

func cachedPages(t testing.TB, db *sql.DB, d typo3.Dialect, page int64) int {
	return t3Count(t, db, d, "SELECT COUNT(*) FROM cache_pages WHERE identifier = ?", fmt.Sprintf("cached-%d", page)) +
		t3Count(t, db, d, "SELECT COUNT(*) FROM cache_pages_tags WHERE identifier = ?", fmt.Sprintf("cached-%d", page))
}

// noWaymarkCopy checks that Waymark keeps nothing of the records beside
// TYPO3: no record and no record history in its own database.
func noWaymarkCopy(t testing.TB, db *store.DB) {
	t.Helper()
	for _, table := range []string{"records", "record_history"} {
		var n int
		if err := db.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("Waymark's %s holds %d rows beside TYPO3, want none: the records are TYPO3's", table, n)
		}
	}
}

// besideTYPO3 is a Waymark on db (nil: a new SQLite database) beside the
// TYPO3 database of t3 as `serve --typo3` runs: the live source, directory
// and writer (opts.TYPO3Writer, when set, in place of the one of the same
// connection) wired, and the Waymark part of fixtureText imported
// ({{LLM}}: the scripted model's URL).
func besideTYPO3(t testing.TB, db *store.DB, t3 typo3test.DB, fixtureText string, opts *wt.Options) *wt.Env {
	t.Helper()
	ctx := context.Background()
	sites := t.TempDir()
	if err := typo3.WriteDemoSites(sites); err != nil {
		t.Fatal(err)
	}
	inst, err := live.New(ctx, t3.DB, t3.Dialect, sites, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := wt.Options{}
	if opts != nil {
		o = *opts
	}
	o.TYPO3 = inst
	if db == nil {
		db = storetest.SQLite(t)
	}
	e := wt.New(t, db, "", &o)
	doc, err := fixture.Decode([]byte(strings.ReplaceAll(fixtureText, "{{LLM}}", e.LLM.URL())), "site.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		_, err := fixture.ImportTx(ctx, tx, time.Now(), e.App.FixtureOptions(), fixture.WaymarkPart(doc))
		return err
	}); err != nil {
		t.Fatalf("import Waymark's part: %v", err)
	}
	return e
}

func TestApprovedCardIsWrittenToTYPO3WithHistoryLogAndPageCacheFlushed(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		db, d := t3.DB, t3.Dialect
		seedPageCache(t, db, d, 2)
		seedPageCache(t, db, d, 5) // another page: stays cached
		before := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2")
		e := besideTYPO3(t, nil, t3, string(demo.Fixture), nil)
		tour := startDemoTour(t, e, 2, 0, 1)
		desc := tour.expect("pages", 2, "description", 1, 4, "pages:2")
		start := time.Now().Unix()
		tour.answer("apply")
		tour.expect("pages", 2, "seoTitle", 2, 4, "pages:2")

		if got := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2"); got != desc.text {
			t.Errorf("TYPO3 pages:2 description = %q, want the approved %q", got, desc.text)
		}
		if ts := t3Count(t, db, d, "SELECT tstamp FROM pages WHERE uid = 2"); int64(ts) < start {
			t.Errorf("TYPO3 pages:2 tstamp = %d, want the time of the write (>= %d)", ts, start)
		}
		if n := t3Count(t, db, d, "SELECT COUNT(*) FROM sys_history WHERE tablename = 'pages' AND recuid = 2"); n != 1 {
			t.Fatalf("sys_history rows of pages:2 = %d, want 1", n)
		}
		hist := t3Value(t, db, d, "SELECT history_data FROM sys_history WHERE tablename = 'pages' AND recuid = 2")
		if !strings.Contains(hist, `"oldRecord":{"description":`) || !strings.Contains(hist, jsonText(desc.text)) || !strings.Contains(hist, jsonText(before)) {
			t.Errorf("history_data = %s, want the old and the new description", hist)
		}
		if n := t3Count(t, db, d, "SELECT COUNT(*) FROM sys_history WHERE tablename = 'pages' AND recuid = 2 AND actiontype = 2 AND usertype = 'BE' AND userid = ?", erikaUID); n != 1 {
			t.Errorf("the sys_history row is not an update by erika (%d)", n)
		}
		if key := t3Value(t, db, d, "SELECT correlation_id FROM sys_history WHERE tablename = 'pages' AND recuid = 2"); !strings.HasPrefix(key, "waymark:") || !strings.HasSuffix(key, "#description") {
			t.Errorf("correlation_id = %q, want waymark:<run>/<call>#description", key)
		}
		if n := t3Count(t, db, d, "SELECT COUNT(*) FROM sys_log WHERE tablename = 'pages' AND recuid = 2 AND action = 2 AND type = 1 AND userid = ? AND event_pid = 2", erikaUID); n != 1 {
			t.Errorf("sys_log entries of the update = %d, want 1", n)
		}
		if n := cachedPages(t, db, d, 2); n != 0 {
			t.Errorf("page 2's cache entry and tags left: %d rows", n)
		}
		if n := cachedPages(t, db, d, 5); n != 3 {
			t.Errorf("page 5's cache entry was touched: %d rows, want 3", n)
		}
		noWaymarkCopy(t, e.DB)
	})
}

func jsonText(s string) string {
	b := strings.NewReplacer(`"`, `\"`, `\`, `\\`).Replace(s)
	return `"` + b + `"`
}

func TestFieldChangedInTYPO3AfterTheCardIsHandedBackNotOverwritten(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		db, d := t3.DB, t3.Dialect
		seedPageCache(t, db, d, 2)
		e := besideTYPO3(t, nil, t3, string(demo.Fixture), nil)
		tour := startDemoTour(t, e, 2, 0, 1)
		desc := tour.expect("pages", 2, "description", 1, 4, "pages:2")
		const edited = "Edited in TYPO3's page module while the card was open."
		if _, err := db.Exec(t3q(d, "UPDATE pages SET description = ? WHERE uid = 2"), edited); err != nil {
			t.Fatal(err)
		}
		tour.answer("apply")

		if got := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2"); got != edited {
			t.Fatalf("TYPO3's edit was overwritten: %q", got)
		}
		if n := t3Count(t, db, d, "SELECT COUNT(*) FROM sys_history"); n != 0 {
			t.Errorf("sys_history rows = %d, want none", n)
		}
		if n := t3Count(t, db, d, "SELECT COUNT(*) FROM sys_log"); n != 0 {
			t.Errorf("sys_log rows = %d, want none", n)
		}
		if n := cachedPages(t, db, d, 2); n != 3 {
			t.Errorf("the page cache was flushed for a write that did not happen: %d rows", n)
		}
		// The card is handed back: same point, with the notice and the value TYPO3 holds now.
		if tour.conv["error"] != "preview_changed" {
			t.Errorf("conversation error = %v, want preview_changed", tour.conv["error"])
		}
		call := tour.card()["calls"].([]any)[0].(map[string]any)
		item := call["preview"].([]any)[0].(map[string]any)
		if item["field"] != "description" || item["current"] != edited {
			t.Errorf("the card handed back shows %v = %q, want the current TYPO3 value %q", item["field"], item["current"], edited)
		}
		if c, n, _ := tour.progress(); c != 1 || n != 4 {
			t.Errorf("progress = %d of %d, want the same point 1 of 4", c, n)
		}
		// Approved again, over the value it now shows, it is written.
		proposed := item["proposed"].(string)
		tour.answer("apply")
		if got := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2"); got != proposed {
			t.Errorf("after the second approval TYPO3 holds %q, want %q", got, proposed)
		}
		if hist := t3Value(t, db, d, "SELECT history_data FROM sys_history WHERE tablename = 'pages' AND recuid = 2"); !strings.Contains(hist, jsonText(edited)) {
			t.Errorf("history_data = %s, want the TYPO3 edit as the old value", hist)
		}
		_ = desc
	})
}

// The runs API answers an approval whose field was changed in TYPO3 with 409
// preview_changed (the approval's check reads TYPO3 live) and the card with
// the current value; nothing is written.
func TestRunsAPIHandsBackACardWhoseFieldChangedInTYPO3(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		db, d := t3.DB, t3.Dialect
		e := besideTYPO3(t, nil, t3, scriptedDemo, nil)
		e.LLM.Add(demoProposal("c2", "A new description of the About page of Nordlicht Digital, proposed by the scripted model.")...)
		erika := e.As("demo-token-erika")
		st := startRun(t, erika, 1, false)
		id, digest := st.UUID, pendingDigest(t, st)
		const edited = "Changed in TYPO3 meanwhile."
		if _, err := db.Exec(t3q(d, "UPDATE pages SET description = ? WHERE uid = 2"), edited); err != nil {
			t.Fatal(err)
		}
		r := erika.Do("POST", "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": digest})
		if r.Status != 409 || r.ErrorCode() != "preview_changed" {
			t.Fatalf("approval = %d %s, want 409 preview_changed", r.Status, r.Body)
		}
		st = wt.Decode[wt.RunStatus](t, erika.Must("GET", "/api/runs/"+id, nil, 200))
		if cur := st.Pending.Calls[0].Preview[0].Current; cur != edited {
			t.Fatalf("the card shows %q, want the value TYPO3 holds now %q", cur, edited)
		}
		if got := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2"); got != edited {
			t.Fatalf("TYPO3's edit was overwritten: %q", got)
		}
		if n := t3Count(t, db, d, "SELECT COUNT(*) FROM sys_history"); n != 0 {
			t.Errorf("sys_history rows = %d, want none", n)
		}
		erika.Must("POST", "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": pendingDigest(t, st)}, 200)
		if got := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2"); !strings.HasPrefix(got, "A new description") {
			t.Errorf("the card approved again was not written: %q", got)
		}
	})
}

// scriptedDemo is the demo site with its first configuration on the
// scripted model server.
var scriptedDemo = strings.Replace(string(demo.Fixture), "provider: {type: demo}",
	`provider: {type: openai, baseUrl: "{{LLM}}", apiKey: sk-scenario-secret, model: m}`, 1)

// demoProposal reads page 2 of the demo and proposes description text.
func demoProposal(callID, text string) []llmtest.Reply {
	return []llmtest.Reply{
		toolCall("c1", "read_page", `{"page": 2}`),
		toolCall(callID, "update_page_metadata", fmt.Sprintf(`{"page": 2, "fields": {"description": %q}}`, text)),
		answer("Done."),
	}
}

func TestTYPO3DatabaseGoneMidTourFailsTheStepClearlyAndWritesNothing(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		db, d := t3.DB, t3.Dialect
		proxy := typo3test.NewProxy(t, t3.Addr)
		via := t3.Via(proxy.Addr)
		if err := via.Ping(); err != nil {
			t.Fatal(err)
		}
		// The reads reach TYPO3 directly, the writer through the proxy: the
		// database goes away between the approval's reads and its write.
		e := besideTYPO3(t, nil, t3, scriptedDemo, &wt.Options{TYPO3Writer: typo3Writer(t, via, d)})
		e.LLM.Add(demoProposal("c2", "A new description of the About page of Nordlicht Digital, proposed by the scripted model.")...)
		erika := e.As("demo-token-erika")
		before := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2")
		st := startRun(t, erika, 1, false)
		proxy.Stop() // the TYPO3 database goes away between card and answer
		st = wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs/"+st.UUID+"/approval",
			map[string]any{"approve": true, "turnDigest": pendingDigest(t, st)}, 200))
		if st.Status != "failed" || st.ErrorClass != "write_target_unreachable" || !strings.Contains(st.Error, "unreachable; nothing was written") {
			t.Errorf("run = %s %s %q, want failed write_target_unreachable with a clear reason", st.Status, st.ErrorClass, st.Error)
		}
		if got := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2"); got != before {
			t.Errorf("TYPO3 pages:2 description = %q, want it unchanged", got)
		}
		if n := t3Count(t, db, d, "SELECT COUNT(*) FROM sys_history") + t3Count(t, db, d, "SELECT COUNT(*) FROM sys_log"); n != 0 {
			t.Errorf("history and log rows = %d, want none", n)
		}
		noWaymarkCopy(t, e.DB)
	})
}

// The same through the chat API: the conversation fails with the card's
// change not applied, and its run names the reason.
func TestTYPO3DatabaseGoneMidChatTourFailsTheStepClearlyAndWritesNothing(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		db, d := t3.DB, t3.Dialect
		proxy := typo3test.NewProxy(t, t3.Addr)
		via := t3.Via(proxy.Addr)
		e := besideTYPO3(t, nil, t3, string(demo.Fixture), &wt.Options{TYPO3Writer: typo3Writer(t, via, d)})
		before := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2")
		tour := startDemoTour(t, e, 2, 0, 1)
		tour.expect("pages", 2, "description", 1, 4, "pages:2")
		proxy.Stop()
		tour.answer("apply")
		if tour.conv["status"] != "failed" {
			t.Errorf("conversation status = %v, want failed", tour.conv["status"])
		}
		outcomes, _ := tour.conv["outcomes"].([]any)
		if len(outcomes) != 1 || outcomes[0].(map[string]any)["outcome"] != "not_applied" {
			t.Errorf("outcomes = %v, want the description not applied", outcomes)
		}
		st := wt.Decode[wt.RunStatus](t, tour.erika.Must("GET", "/api/runs/"+tour.conv["lastRunUuid"].(string), nil, 200))
		if st.ErrorClass != "write_target_unreachable" || !strings.Contains(st.Error, "unreachable; nothing was written") {
			t.Errorf("the conversation's run = %s %q, want write_target_unreachable", st.ErrorClass, st.Error)
		}
		if got := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2"); got != before {
			t.Errorf("TYPO3 pages:2 description = %q, want it unchanged", got)
		}
		if n := t3Count(t, db, d, "SELECT COUNT(*) FROM sys_history") + t3Count(t, db, d, "SELECT COUNT(*) FROM sys_log"); n != 0 {
			t.Errorf("history and log rows = %d, want none", n)
		}
		noWaymarkCopy(t, e.DB)
	})
}

// A card of two writes, the second on a field changed in TYPO3 after the
// approval's check (while the first is written): the first is written; the
// second is not — the check of the later call reads TYPO3 live — and its
// call is answered to the model as preview_changed.
func TestLaterCallOfAReleasedCardOnAFieldChangedInTYPO3IsAnsweredNotWritten(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		db, d := t3.DB, t3.Dialect
		const edited = "Edited in TYPO3"
		w := typo3Writer(t, db, d)
		var once sync.Once
		w.Test.BeforeCommit = func() { // the first write's TYPO3 transaction, before its commit
			once.Do(func() {
				if _, err := db.Exec(t3q(d, "UPDATE tt_content SET header = ? WHERE uid = 110"), edited); err != nil {
					t.Error(err)
				}
			})
		}
		e := besideTYPO3(t, nil, t3, scriptedDemo, &wt.Options{TYPO3Writer: w})
		const desc = "A new description of the About page of Nordlicht Digital, proposed by the scripted model."
		e.LLM.Add(toolCall("c1", "read_page", `{"page": 2}`),
			llmtest.Reply{ToolCalls: []llm.ToolCall{
				{ID: "c2", Name: "update_page_metadata", Arguments: fmt.Sprintf(`{"page": 2, "fields": {"description": %q}}`, desc)},
				{ID: "c3", Name: "update_content", Arguments: `{"uid": 110, "fields": {"header": "About Nordlicht Digital"}}`},
			}},
			answer("Done."))
		erika := e.As("demo-token-erika")
		st := startRun(t, erika, 1, false)
		st = wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs/"+st.UUID+"/approval",
			map[string]any{"approve": true, "turnDigest": pendingDigest(t, st)}, 200))
		if st.Status != "completed" {
			t.Errorf("run = %s %s %q, want completed", st.Status, st.ErrorClass, st.Error)
		}
		if got := t3Value(t, db, d, "SELECT description FROM pages WHERE uid = 2"); got != desc {
			t.Errorf("the first write of the card did not land: %q", got)
		}
		if got := t3Value(t, db, d, "SELECT header FROM tt_content WHERE uid = 110"); got != edited {
			t.Errorf("TYPO3's edit of tt_content:110 was overwritten: %q", got)
		}
		if n := t3Count(t, db, d, "SELECT COUNT(*) FROM sys_history WHERE tablename = 'tt_content'"); n != 0 {
			t.Errorf("sys_history rows of tt_content = %d, want none", n)
		}
		reqs := e.LLM.Requests()
		last := string(reqs[len(reqs)-1].Body)
		if !strings.Contains(last, `{\"error\":\"preview_changed: the record changed after the approval; nothing was written\"}","tool_call_id":"c3"`) {
			t.Errorf("the model was not told of the conflict: %s", last)
		}
		noWaymarkCopy(t, e.DB)
	})
}

// A record deleted in TYPO3 after the card was shown: the write's check
// reads it deleted from TYPO3 and refuses, the model is told the page is not
// found, nothing is written.
func TestRecordDeletedInTYPO3AfterTheCardIsNotWritten(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		db, d := t3.DB, t3.Dialect
		e := besideTYPO3(t, nil, t3, scriptedDemo, nil)
		e.LLM.Add(demoProposal("c2", "A new description of the About page of Nordlicht Digital, proposed by the scripted model.")...)
		erika := e.As("demo-token-erika")
		st := startRun(t, erika, 1, false)
		if _, err := db.Exec("UPDATE pages SET deleted = 1 WHERE uid = 2"); err != nil {
			t.Fatal(err)
		}
		st = wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs/"+st.UUID+"/approval",
			map[string]any{"approve": true, "turnDigest": pendingDigest(t, st)}, 200))
		if st.Status != "completed" {
			t.Errorf("run = %s %s %q, want completed", st.Status, st.ErrorClass, st.Error)
		}
		reqs := e.LLM.Requests()
		if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, `{\"error\":\"page not found\"}`) {
			t.Errorf("the model was not told the page is gone: %s", last)
		}
		if n := t3Count(t, db, d, "SELECT COUNT(*) FROM sys_history") + t3Count(t, db, d, "SELECT COUNT(*) FROM sys_log"); n != 0 {
			t.Errorf("history and log rows = %d, want none", n)
		}
		noWaymarkCopy(t, e.DB)
	})
}
