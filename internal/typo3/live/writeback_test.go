package live_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
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
	"waymark/internal/waymarktest"
)

// tourOfAbout starts the SEO tour of "About" (page 2) as c and sends its
// first message; it returns the conversation's path.
func tourOfAbout(t *testing.T, c *waymarktest.Client) string {
	t.Helper()
	r := c.Do("POST", "/api/conversations", map[string]any{"page": 2, "language": 0, "skill": 19, "configuration": 9})
	if r.Status != 201 {
		t.Fatalf("start = %d %s", r.Status, r.Body)
	}
	var conv struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(r.Body, &conv)
	base := fmt.Sprintf("/api/conversations/%d", conv.ID)
	c.Must("POST", base+"/messages", map[string]any{"content": "Go"}, 202)
	return base
}

// cardOf waits until the conversation at base shows a card and returns it.
func cardOf(t *testing.T, c *waymarktest.Client, base string) map[string]any {
	t.Helper()
	view := settle(t, c, base)
	card, _ := view["card"].(map[string]any)
	if view["status"] != "awaiting_approval" || card == nil {
		t.Fatalf("no card: %v", view)
	}
	return card
}

// t3value reads one value from the TYPO3 database.
func (s *source) t3value(t *testing.T, query string, args ...any) string {
	t.Helper()
	if s.d == typo3.Postgres {
		query = pgBind(query)
	}
	var v any
	if err := s.t3.QueryRow(query, args...).Scan(&v); err != nil {
		t.Fatalf("typo3 %s: %v", query, err)
	}
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

// revokeModify takes pages out of the tables the Editors group (erika's)
// may modify — in TYPO3's be_groups or in Waymark's own, as the source has it.
func (s *source) revokeModify(t *testing.T) {
	t.Helper()
	if s.t3 != nil {
		s.t3exec(t, "UPDATE `be_groups` SET `tables_modify` = 'tt_content' WHERE `uid` = 1")
		return
	}
	if _, err := s.env.DB.Exec(context.Background(), `UPDATE be_groups SET tables_modify = '["tt_content"]' WHERE uid = 1`); err != nil {
		t.Fatal(err)
	}
}

// revokeSEOTitle takes the Editors group's non-exclude right on the SEO
// title away.
func (s *source) revokeSEOTitle(t *testing.T) {
	t.Helper()
	if s.t3 != nil {
		s.t3exec(t, "UPDATE `be_groups` SET `tables_modify` = 'pages,tt_content', `non_exclude_fields` = 'pages:description,pages:keywords' WHERE `uid` = 1")
		return
	}
	if _, err := s.env.DB.Exec(context.Background(), `UPDATE be_groups SET tables_modify = '["pages","tt_content"]',
		non_exclude_fields = '["pages:description","pages:keywords"]' WHERE uid = 1`); err != nil {
		t.Fatal(err)
	}
}

// A guided tour's applied and variant answers run alike on every source:
// a card answered "variant" writes nothing and the model proposes again; the
// applied one lands where the records come from — on TYPO3 in the pages row
// with its tstamp, a sys_history update row by the editor, a sys_log entry
// and the page's cache entries removed, and nothing of the record kept in
// Waymark; on the built-in source in Waymark's records and record history.
// A card applied after the editor lost the right to modify the table, and
// one applied after she lost the non-exclude right on its field (each taken
// away between the card and the answer), are refused at the write alike and
// write nothing.
func TestAppliedAndVariantCardsOfATourRunAlikeOnEverySource(t *testing.T) {
	var want []string
	eachSource(t, func(t *testing.T, s *source) {
		ctx := context.Background()
		s.importText(t, tourSite)
		update := func(id, fields string) llmtest.Reply {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: "update_page_metadata", Arguments: `{"page": 2, "fields": ` + fields + `}`}}}
		}
		s.env.LLM.Add(
			update("c1", `{"seoTitle": "About Nordlicht"}`),
			update("c2", `{"seoTitle": "About Nordlicht Digital"}`),
			update("c3", `{"seoTitle": "About us at Nordlicht Digital"}`),
			update("c4", `{"description": "Who we are and how we work."}`),
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p", Name: "set_progress", Arguments: `{"current": 2, "total": 2, "completed": true}`}}},
			llmtest.Reply{Content: "Done."},
		)
		if s.t3 != nil {
			s.t3exec(t, "INSERT INTO `cache_pages` (`identifier`, `expires`, `content`) VALUES ('cached-2', ?, '<html>')", time.Now().Add(time.Hour).Unix())
			s.t3exec(t, "INSERT INTO `cache_pages_tags` (`identifier`, `tag`) VALUES ('cached-2', 'pageId_2')")
		}
		var got []string
		note := func(format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) }
		c := s.env.As("demo-token-erika")
		base := tourOfAbout(t, c)
		start := time.Now().Unix()
		for i, answer := range []string{"variant", "apply", "apply", "apply"} {
			view := settle(t, c, base)
			card, _ := view["card"].(map[string]any)
			if view["status"] != "awaiting_approval" || card == nil {
				t.Fatalf("%s: before %s: %v", s.name, answer, view)
			}
			// The search result's address is the source's own (a TYPO3 site
			// has a base, the built-in source none): compared apart from the card.
			for _, c := range card["calls"].([]any) {
				delete(c.(map[string]any), "searchPreview")
			}
			calls, _ := json.Marshal(card["calls"])
			note("card: %s", calls)
			switch i {
			case 2:
				s.revokeSEOTitle(t)
			case 3:
				s.revokeModify(t)
			}
			c.Must("POST", base+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": answer}, 202)
		}
		view := settle(t, c, base)
		note("status %v outcomes %v", view["status"], view["outcomes"])
		if reqs := s.env.LLM.Requests(); len(reqs) > 0 {
			var body struct {
				Messages []struct {
					Role       string `json:"role"`
					Content    string `json:"content"`
					ToolCallID string `json:"tool_call_id"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
				t.Fatal(err)
			}
			for _, m := range body.Messages {
				if m.Role == "tool" {
					note("tool %s: %s", m.ToolCallID, nonEmptyFields(t, m.Content))
				}
			}
		}
		// The page as the editor reads it now, through the seam.
		rec, err := s.env.App.Source.Get(ctx, s.env.DB, "pages", 2)
		if err != nil {
			t.Fatal(err)
		}
		note("pages:2 seoTitle %q description %q", rec.Fields["seoTitle"], rec.Fields["description"])

		var hist int
		if err := s.env.DB.QueryRow(ctx, "SELECT count(*) FROM record_history").Scan(&hist); err != nil {
			t.Fatal(err)
		}
		if s.t3 == nil {
			if hist != 1 {
				t.Errorf("builtin: %d rows of Waymark's record history, want 1 (the applied seoTitle)", hist)
			}
		} else {
			if hist != 0 {
				t.Errorf("%s: %d rows of Waymark's record history: the records are TYPO3's", s.name, hist)
			}
			if v := s.t3value(t, "SELECT `seo_title` FROM `pages` WHERE `uid` = 2"); v != "About Nordlicht Digital" {
				t.Errorf("%s: TYPO3 pages:2 seo_title = %q, want the applied title", s.name, v)
			}
			if v := s.t3value(t, "SELECT `tstamp` FROM `pages` WHERE `uid` = 2"); v < fmt.Sprint(start) || len(v) != len(fmt.Sprint(start)) {
				t.Errorf("%s: TYPO3 pages:2 tstamp = %s, want the time of the write (>= %d)", s.name, v, start)
			}
			if n := s.t3value(t, "SELECT COUNT(*) FROM `sys_history` WHERE `tablename` = 'pages' AND `recuid` = 2 AND `actiontype` = 2 AND `userid` = 2"); n != "1" {
				t.Errorf("%s: sys_history update rows of pages:2 by erika = %s, want 1", s.name, n)
			}
			if h := s.t3value(t, "SELECT `history_data` FROM `sys_history` WHERE `tablename` = 'pages' AND `recuid` = 2"); !strings.Contains(h, "About Nordlicht Digital") {
				t.Errorf("%s: history_data = %s, want the new title", s.name, h)
			}
			if n := s.t3value(t, "SELECT COUNT(*) FROM `sys_log` WHERE `tablename` = 'pages' AND `recuid` = 2 AND `userid` = 2"); n != "1" {
				t.Errorf("%s: sys_log entries of pages:2 = %s, want 1", s.name, n)
			}
			if n := s.t3value(t, "SELECT COUNT(*) FROM `cache_pages` WHERE `identifier` = 'cached-2'"); n != "0" {
				t.Errorf("%s: page 2's cache entry left (%s)", s.name, n)
			}
			if n := s.t3value(t, "SELECT COUNT(*) FROM `cache_pages_tags` WHERE `identifier` = 'cached-2'"); n != "0" {
				t.Errorf("%s: page 2's cache tags left (%s)", s.name, n)
			}
		}
		if want == nil {
			want = got
			return
		}
		t.Logf("%s: %s", s.name, strings.Join(got, "\n  "))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the tour went\n  %s\nbuilt-in went\n  %s", s.name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	})
	t.Logf("builtin: %s", strings.Join(want, "\n  "))
	all := strings.Join(want, "\n")
	for _, line := range []string{`tool c1: {"decided_by":"run_owner","error":"approval_denied","reason":"variant"}`,
		`"written":{"fields":["seoTitle"],"table":"pages","uid":2}`,
		`tool c3: {"error":"permission denied: field pages.seoTitle may not be edited"}`,
		`tool c4: {"error":"permission denied: table pages may not be modified"}`,
		`pages:2 seoTitle "About Nordlicht Digital" description ""`} {
		if !strings.Contains(all, line) {
			t.Errorf("the tour lacks %s", line)
		}
	}
}

// Beside TYPO3, a field changed in TYPO3's page module while its card was
// open is not overwritten when the card is applied: the card is handed back
// (preview_changed) showing the value TYPO3 holds now, nothing is written
// in TYPO3; applied again over that value, it is written.
func TestACardWhoseFieldChangedInTYPO3IsHandedBackBesideTYPO3(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		if s.t3 == nil {
			t.Skip("TYPO3 only: nothing changes the built-in records beside Waymark")
		}
		s.importText(t, tourSite)
		s.env.LLM.Add(
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "update_page_metadata", Arguments: `{"page": 2, "fields": {"description": "Who we are and how we work."}}`}}},
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p", Name: "set_progress", Arguments: `{"current": 1, "total": 1, "completed": true}`}}},
			llmtest.Reply{Content: "Done."},
		)
		c := s.env.As("demo-token-erika")
		base := tourOfAbout(t, c)
		card := cardOf(t, c, base)
		const edited = "Edited in TYPO3's page module while the card was open."
		s.t3exec(t, "UPDATE `pages` SET `description` = ? WHERE `uid` = 2", edited)
		c.Must("POST", base+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": "apply"}, 202)
		view := settle(t, c, base)
		if got := s.t3value(t, "SELECT `description` FROM `pages` WHERE `uid` = 2"); got != edited {
			t.Fatalf("%s: TYPO3's edit was overwritten: %q", s.name, got)
		}
		if n := s.t3value(t, "SELECT COUNT(*) FROM `sys_history`"); n != "0" {
			t.Errorf("%s: sys_history rows = %s, want none", s.name, n)
		}
		card, _ = view["card"].(map[string]any)
		if view["status"] != "awaiting_approval" || card == nil {
			t.Fatalf("%s: the card was not handed back: %v", s.name, view)
		}
		item := card["calls"].([]any)[0].(map[string]any)["preview"].([]any)[0].(map[string]any)
		if item["field"] != "description" || item["current"] != edited {
			t.Errorf("%s: the card handed back shows %v = %q, want TYPO3's %q", s.name, item["field"], item["current"], edited)
		}
		c.Must("POST", base+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": "apply"}, 202)
		settle(t, c, base)
		if got := s.t3value(t, "SELECT `description` FROM `pages` WHERE `uid` = 2"); got != "Who we are and how we work." {
			t.Errorf("%s: applied again, TYPO3 holds %q", s.name, got)
		}
		if h := s.t3value(t, "SELECT `history_data` FROM `sys_history` WHERE `tablename` = 'pages' AND `recuid` = 2"); !strings.Contains(h, "Edited in TYPO3") {
			t.Errorf("%s: history_data = %s, want TYPO3's edit as the old value", s.name, h)
		}
	})
}

// Beside TYPO3, a record deleted in TYPO3 while its card was open is not
// written when the card is applied: the write's check reads the deleted row
// live and refuses, the card's change is not_applied, nothing lands in
// TYPO3's history (there is no copy of the record in Waymark to keep apart).
func TestACardOnARecordDeletedInTYPO3WritesNothingBesideTYPO3(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		if s.t3 == nil {
			t.Skip("TYPO3 only: nothing deletes the built-in records beside Waymark")
		}
		s.importText(t, tourSite)
		s.env.LLM.Add(
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "update_page_metadata", Arguments: `{"page": 2, "fields": {"description": "Who we are and how we work."}}`}}},
			llmtest.Reply{Content: "Done."},
		)
		c := s.env.As("demo-token-erika")
		base := tourOfAbout(t, c)
		card := cardOf(t, c, base)
		s.t3exec(t, "UPDATE `pages` SET `deleted` = 1 WHERE `uid` = 2")
		r := c.Do("POST", base+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": "apply"})
		view := settle(t, c, base)
		if r.Status != 202 {
			t.Fatalf("%s: answer = %d %s", s.name, r.Status, r.Body)
		}
		if o := fmt.Sprint(view["outcomes"]); !strings.Contains(o, "outcome:not_applied") {
			t.Errorf("%s: outcomes %s, want the card's change not_applied", s.name, o)
		}
		if got := s.t3value(t, "SELECT `description` FROM `pages` WHERE `uid` = 2"); got != "" {
			t.Errorf("%s: the deleted page was written: %q", s.name, got)
		}
		if n := s.t3value(t, "SELECT COUNT(*) FROM `sys_history`"); n != "0" {
			t.Errorf("%s: sys_history rows = %s, want none", s.name, n)
		}
	})
}

// A page or content element locked for editing in TYPO3 (editlock) is
// changed only by administrators, as in TYPO3's backend: a card answered
// after the editor's page was locked writes nothing, a tour on the locked
// page is refused at the start (409 page_read_only: neither the page nor
// anything on it may be edited; an administrator's begins), and a card on a
// locked content element of a page she may edit writes nothing either. The
// built-in source has no lock.
func TestARecordLockedForEditingInTYPO3IsNotWrittenByAnEditor(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		if s.t3 == nil {
			t.Skip("TYPO3 only: the built-in source has no editlock")
		}
		s.importText(t, tourSite)
		s.env.LLM.Add(
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "update_page_metadata", Arguments: `{"page": 2, "fields": {"description": "Who we are and how we work."}}`}}},
			llmtest.Reply{Content: "Done."},
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "update_content", Arguments: `{"uid": 110, "fields": {"header": "About Nordlicht Digital"}}`}}},
			llmtest.Reply{Content: "Done."},
		)
		c := s.env.As("demo-token-erika")
		start := map[string]any{"page": 2, "language": 0, "skill": 19, "configuration": 9}
		answerCard := func(lock string) map[string]any {
			t.Helper()
			base := tourOfAbout(t, c)
			card := cardOf(t, c, base)
			s.t3exec(t, lock)
			c.Must("POST", base+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": "apply"}, 202)
			return settle(t, c, base)
		}

		view := answerCard("UPDATE `pages` SET `editlock` = 1 WHERE `uid` = 2")
		if o := fmt.Sprint(view["outcomes"]); !strings.Contains(o, "outcome:not_applied") {
			t.Errorf("%s: outcomes %s, want the card on the locked page not_applied", s.name, o)
		}
		if got := s.t3value(t, "SELECT `description` FROM `pages` WHERE `uid` = 2"); got != "" {
			t.Errorf("%s: the locked page was written: %q", s.name, got)
		}
		if r := c.Do("POST", "/api/conversations", start); r.Status != 409 || r.ErrorCode() != "page_read_only" {
			t.Errorf("%s: a tour on the locked page = %d %s, want 409 page_read_only", s.name, r.Status, r.Body)
		}
		s.env.As("demo-token-admin").Must("POST", "/api/conversations", start, 201) // an administrator may

		s.t3exec(t, "UPDATE `pages` SET `editlock` = 0 WHERE `uid` = 2")
		view = answerCard("UPDATE `tt_content` SET `editlock` = 1 WHERE `uid` = 110")
		if o := fmt.Sprint(view["outcomes"]); !strings.Contains(o, "outcome:not_applied") {
			t.Errorf("%s: outcomes %s, want the card on the locked content element not_applied", s.name, o)
		}
		if got := s.t3value(t, "SELECT `header` FROM `tt_content` WHERE `uid` = 110"); got == "About Nordlicht Digital" {
			t.Errorf("%s: the locked content element was written", s.name)
		}
		if n := s.t3value(t, "SELECT COUNT(*) FROM `sys_history`"); n != "0" {
			t.Errorf("%s: sys_history rows = %s, want none", s.name, n)
		}
	})
}

// Beside TYPO3, the TYPO3 database going away between a card and its answer
// writes nothing: the editor is read from TYPO3 before anything else, so the
// answer is refused 503 typo3_unavailable (try again once TYPO3 is back),
// and no write is attempted — never a half-write.
func TestTYPO3GoneBetweenCardAndAnswerBesideTYPO3WritesNothing(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		proxy := typo3test.NewProxy(t, t3.Addr)
		env := besideTYPO3(t, t3.Via(proxy.Addr), t3.Dialect, tourSite)
		s := &source{name: string(t3.Dialect), env: env, t3: t3.DB, d: t3.Dialect}
		env.LLM.Add(
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "update_page_metadata", Arguments: `{"page": 2, "fields": {"description": "Who we are and how we work."}}`}}},
			llmtest.Reply{Content: "Done."},
		)
		c := env.As("demo-token-erika")
		base := tourOfAbout(t, c)
		card := cardOf(t, c, base)
		proxy.Stop()
		r := c.Do("POST", base+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": "apply"})
		if r.Status != 503 || r.ErrorCode() != "typo3_unavailable" {
			t.Errorf("%s: answer with TYPO3 gone = %d %s, want 503 typo3_unavailable", s.name, r.Status, r.Body)
		}
		if got := s.t3value(t, "SELECT `description` FROM `pages` WHERE `uid` = 2"); got != "" {
			t.Errorf("%s: TYPO3 pages:2 description = %q, want it unchanged", s.name, got)
		}
		if n := s.t3value(t, "SELECT COUNT(*) FROM `sys_history`"); n != "0" {
			t.Errorf("%s: sys_history rows = %s, want none", s.name, n)
		}
	})
}

// besideTYPO3 is a Waymark beside the demo TYPO3 database db (made by
// typo3test), as `serve --typo3` runs: the live source, directory and
// writer attached, Waymark's part of the demo imported, and extra (a
// fixture text, {{LLM}} the scripted model's URL) on top.
func besideTYPO3(tb testing.TB, db *sql.DB, d typo3.Dialect, extra string) *waymarktest.Env {
	tb.Helper()
	ctx := context.Background()
	sites := tb.TempDir()
	if err := typo3.WriteDemoSites(sites); err != nil {
		tb.Fatal(err)
	}
	inst, err := live.New(ctx, db, d, sites, nil)
	if err != nil {
		tb.Fatal(err)
	}
	wdb := storetest.SQLite(tb)
	env := waymarktest.New(tb, wdb, "", &waymarktest.Options{TYPO3: inst})
	doc, err := fixture.Decode(demo.Fixture, "demo.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	if err := wdb.InTx(ctx, func(tx *store.Tx) error {
		_, err := fixture.ImportTx(ctx, tx, time.Now(), env.App.FixtureOptions(), fixture.WaymarkPart(doc))
		return err
	}); err != nil {
		tb.Fatalf("import Waymark's part of the demo: %v", err)
	}
	if extra != "" {
		importExtra(tb, env, extra)
	}
	return env
}

// importExtra imports a fixture text into env ({{LLM}}: the scripted model's URL).
func importExtra(tb testing.TB, env *waymarktest.Env, text string) {
	tb.Helper()
	ctx := context.Background()
	doc, err := fixture.Decode([]byte(strings.ReplaceAll(text, "{{LLM}}", env.LLM.URL())), "extra.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	if err := env.DB.InTx(ctx, func(tx *store.Tx) error {
		_, err := fixture.ImportTx(ctx, tx, time.Now(), env.App.FixtureOptions(), doc)
		return err
	}); err != nil {
		tb.Fatalf("import: %v", err)
	}
}

// benchSite is a configuration on the scripted model, without skills.
const benchSite = `
configurations:
  - {uid: 9, identifier: scripted, name: Scripted, active: true, groups: [1, 2, 3],
     provider: {type: openai, baseUrl: "{{LLM}}", apiKey: sk-scenario-secret, model: m},
     contextWindow: 32000, maxOutputTokens: 1000, requireSecondApprover: false, privacy: metadata}
`

// BenchmarkCardAnswersOnEverySource approves one write card per iteration
// through the runs API — the approval (the editor, rights and record read
// from the source), the write, the model's closing reply — on the built-in
// source and beside TYPO3 on MariaDB and on PostgreSQL (Waymark's own
// database: SQLite). Starting the run that shows the card is not timed.
func BenchmarkCardAnswersOnEverySource(b *testing.B) {
	bench := func(b *testing.B, env *waymarktest.Env, written func() int) {
		erika := env.As("demo-token-erika")
		n := 0
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			env.LLM.Add(
				llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c", Name: "update_page_metadata",
					Arguments: fmt.Sprintf(`{"page": 2, "fields": {"description": "About Nordlicht Digital, proposal number %d."}}`, i)}}},
				llmtest.Reply{Content: "Done."})
			r := erika.Do("POST", "/api/runs", map[string]any{"configuration": 9,
				"messages": []map[string]string{{"role": "user", "content": "Improve the description of page 2"}}})
			var st struct {
				UUID    string `json:"uuid"`
				Pending *struct {
					TurnDigest string `json:"turnDigest"`
				} `json:"pending"`
			}
			if r.Status != 201 || json.Unmarshal(r.Body, &st) != nil || st.Pending == nil {
				b.Fatalf("run %d = %d %s: no card", i, r.Status, r.Body)
			}
			b.StartTimer()
			r = erika.Do("POST", "/api/runs/"+st.UUID+"/approval", map[string]any{"approve": true, "turnDigest": st.Pending.TurnDigest})
			if r.Status != 200 {
				b.Fatalf("approval %d = %d %s", i, r.Status, r.Body)
			}
			n++
		}
		if got := written(); got != n {
			b.Fatalf("%d cards answered, %d writes", n, got)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "answers/s")
	}
	b.Run("builtin", func(b *testing.B) {
		env := waymarktest.New(b, storetest.SQLite(b), string(demo.Fixture), nil)
		importExtra(b, env, benchSite)
		bench(b, env, func() int {
			var n int
			if err := env.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM record_history").Scan(&n); err != nil {
				b.Fatal(err)
			}
			return n
		})
	})
	for _, d := range []string{"mariadb", "postgres"} {
		b.Run("typo3-"+d, func(b *testing.B) {
			var t3 typo3test.DB
			if d == "mariadb" {
				t3 = typo3test.Demo(b, typo3test.MariaDB(b))
			} else {
				t3 = typo3test.Demo(b, typo3test.Postgres(b))
			}
			env := besideTYPO3(b, t3.DB, t3.Dialect, benchSite)
			bench(b, env, func() int {
				var n int
				q := "SELECT COUNT(*) FROM sys_history"
				if err := t3.QueryRow(q).Scan(&n); err != nil {
					b.Fatal(err)
				}
				return n
			})
		})
	}
}
