package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"waymark/internal/fixture"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store/storetest"
	"waymark/internal/typo3/bridge"
	"waymark/internal/typo3/live"
	"waymark/internal/typo3/typo3test"
	"waymark/internal/waymarktest"
)

const editorPassword = "Editor-Pass-2026!"

// beside is a Waymark beside the real TYPO3 r with its extension as the
// bridge, and a configuration on the scripted model for TYPO3's group Editor.
type beside struct {
	r      *typo3test.Real
	env    *waymarktest.Env
	editor int64 // TYPO3's uid of the user "editor"
	group  int64 // TYPO3's uid of the group "Editor"
}

func besideReal(t testing.TB, r *typo3test.Real, opts ...waymarktest.Options) *beside {
	t.Helper()
	ctx := context.Background()
	inst, err := live.New(ctx, r.DB, r.Dialect, r.Sites, nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := bridge.NewClient(r.Base, r.Secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	o := waymarktest.Options{}
	if len(opts) > 0 {
		o = opts[0]
	}
	o.TYPO3, o.Bridge = inst, client
	env := waymarktest.New(t, storetest.SQLite(t), "", &o)
	b := &beside{r: r, env: env}
	var group int64
	if err := r.DB.QueryRow(r.Rebind("SELECT `uid` FROM `be_users` WHERE `username` = 'editor'")).Scan(&b.editor); err != nil {
		t.Fatal(err)
	}
	if err := r.DB.QueryRow(r.Rebind("SELECT `uid` FROM `be_groups` WHERE `title` = 'Editor' AND `deleted` = 0")).Scan(&group); err != nil {
		t.Fatal(err)
	}
	// The editor works live (an earlier test may have left her in a workspace).
	r.PHP(t, fmt.Sprintf(`$GLOBALS['BE_USER']->workspace = 0; t3_dh(['be_users' => [%d => ['workspace_id' => 0, 'disable' => 0]]]);`, b.editor))
	b.group = group
	importConfiguration(t, b)
	return b
}

// importConfiguration gives TYPO3's group Editor a configuration (uid 9) on
// the scripted model of b's Waymark.
func importConfiguration(t testing.TB, b *beside) {
	t.Helper()
	text := fmt.Sprintf(`
configurations:
  - {uid: 9, identifier: scripted, name: Scripted, active: true, groups: [%d],
     provider: {type: openai, baseUrl: "%s", apiKey: sk-scenario-secret, model: m},
     contextWindow: 32000, maxOutputTokens: 1000, requireSecondApprover: false, privacy: metadata}
`, b.group, b.env.LLM.URL())
	if _, err := fixture.Import(context.Background(), b.env.DB, []byte(text), "extra.yaml", b.env.App.FixtureOptions()); err != nil {
		t.Fatalf("import: %v", err)
	}
}

// session is a browser's session in Waymark.
type session struct {
	t    *testing.T
	base string
	http *http.Client
	csrf string
}

func (b *beside) browser(t *testing.T) *session {
	jar, _ := cookiejar.New(nil)
	return &session{t: t, base: b.env.URL, http: &http.Client{Jar: jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (s *session) do(method, path string, body any) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, s.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if s.csrf != "" {
		req.Header.Set("X-CSRF-Token", s.csrf)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// enter redeems a ticket through the API and keeps the session.
func (s *session) enter(ticket string) (int, []byte) {
	s.t.Helper()
	status, body := s.do("POST", "/api/login/typo3", map[string]string{"ticket": ticket})
	var a struct {
		CSRF string `json:"csrfToken"`
	}
	if status == 200 && json.Unmarshal(body, &a) == nil {
		s.csrf = a.CSRF
	}
	return status, body
}

// An editor who signed in to TYPO3 opens Waymark from TYPO3's module
// "Waymark" and lands on the page she came from; the ticket works once; an
// approved card is written by TYPO3's DataHandler as her — read back with
// TYPO3's own BackendUtility, RecordHistory and log, the reference index
// clean, the page cache of the page flushed — and her Waymark session ends
// when she logs out of TYPO3.
func TestAnEditorSignedInToTYPO3WritesThroughDataHandler(t *testing.T) {
	typo3test.EachReal(t, func(t *testing.T, r *typo3test.Real) {
		b := besideReal(t, r)
		backend := r.Login(t, "editor", editorPassword)

		// The web UI's entry: the session cookie, and on to the page's process menu.
		ticket := backend.Ticket(t, 2, 0)
		web := b.browser(t)
		status, body := web.do("GET", "/typo3/enter?ticket="+url.QueryEscape(ticket), nil)
		if status != 200 || !strings.Contains(string(body), `url=/chat?page=2&amp;language=0`) {
			t.Fatalf("enter = %d %s", status, body)
		}
		if status, _ := web.do("GET", "/api/me", nil); status != 200 {
			t.Fatalf("me after entering = %d", status)
		}
		// The same ticket again opens nothing.
		again := b.browser(t)
		if status, body := again.do("GET", "/typo3/enter?ticket="+url.QueryEscape(ticket), nil); status != 401 || !strings.Contains(string(body), "Open Waymark from the TYPO3 backend again") {
			t.Fatalf("the ticket used twice = %d %s", status, body)
		}
		if status, _ := again.do("GET", "/api/me", nil); status != 401 {
			t.Fatalf("me after a refused ticket = %d", status)
		}

		// A card approved in Waymark is written by DataHandler as the editor.
		api := b.browser(t)
		if status, body := api.enter(backend.Ticket(t, 2, 0)); status != 200 {
			t.Fatalf("login/typo3 = %d %s", status, body)
		}
		want := fmt.Sprintf("Who we are and how we work, %d.", time.Now().UnixNano())
		b.env.LLM.Add(
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "update_page_metadata",
				Arguments: fmt.Sprintf(`{"page": 2, "fields": {"description": %q}}`, want)}}},
			llmtest.Reply{Content: "Done."})
		r.PHP(t, `\TYPO3\CMS\Core\Utility\GeneralUtility::makeInstance(\TYPO3\CMS\Core\Cache\CacheManager::class)->getCache('pages')
			->set('waymark_probe', 'x', ['pageId_2']);`)
		status, body = api.do("POST", "/api/runs", map[string]any{"configuration": 9,
			"messages": []map[string]string{{"role": "user", "content": "Improve the description of page 2"}}})
		var run struct {
			UUID    string `json:"uuid"`
			Pending *struct {
				TurnDigest string `json:"turnDigest"`
			} `json:"pending"`
		}
		if status != 201 || json.Unmarshal(body, &run) != nil || run.Pending == nil {
			t.Fatalf("run = %d %s", status, body)
		}
		status, body = api.do("POST", "/api/runs/"+run.UUID+"/approval", map[string]any{"approve": true, "turnDigest": run.Pending.TurnDigest})
		if status != 200 {
			t.Fatalf("approval = %d %s", status, body)
		}
		got := r.PHP(t, `
			use TYPO3\CMS\Backend\Utility\BackendUtility; use TYPO3\CMS\Backend\History\RecordHistory; use TYPO3\CMS\Core\Utility\GeneralUtility;
			$rec = BackendUtility::getRecord('pages', 2);
			$log = GeneralUtility::makeInstance(RecordHistory::class, 'pages:2')->getChangeLog(); $h = reset($log);
			$db = GeneralUtility::makeInstance(\TYPO3\CMS\Core\Database\ConnectionPool::class)->getConnectionForTable('sys_log');
			$l = $db->select(['userid', 'log_data', 'details'], 'sys_log', ['tablename' => 'pages', 'recuid' => 2], [], ['uid' => 'DESC'], 1)->fetchAssociative();
			$cached = GeneralUtility::makeInstance(\TYPO3\CMS\Core\Cache\CacheManager::class)->getCache('pages')->get('waymark_probe');
			echo json_encode(['description' => $rec['description'], 'historyUser' => (int)$h['userid'], 'historyNew' => $h['newRecord']['description'] ?? null,
				'logUser' => (int)$l['userid'], 'logHistory' => (int)(json_decode($l['log_data'] ?: '{}', true)['history'] ?? 0), 'cached' => $cached]);`)
		var rb struct {
			Description, HistoryNew string
			HistoryUser, LogUser    int64
			LogHistory              int64
			Cached                  any
		}
		if err := json.Unmarshal([]byte(got), &rb); err != nil {
			t.Fatalf("%v: %s", err, got)
		}
		if rb.Description != want || rb.HistoryNew != want || rb.HistoryUser != b.editor || rb.LogUser != b.editor {
			t.Errorf("TYPO3 holds %+v, want the description %q by the editor (uid %d) in the record, its history and its log", rb, want, b.editor)
		}
		if rb.LogHistory == 0 {
			t.Errorf("the sys_log row has no history link: %s", got)
		}
		if rb.Cached != false {
			t.Errorf("the page cache of page 2 was not flushed: %v", rb.Cached)
		}
		if out := r.Console(t, "referenceindex:update", "--check"); !strings.Contains(out, "Index Integrity was perfect") {
			t.Errorf("referenceindex:update --check after the write:\n%s", out)
		}

		// Logging out of TYPO3 ends her Waymark session at her next request.
		backend.Logout(t)
		time.Sleep(2100 * time.Millisecond) // what TYPO3 said of the session is believed 2 s
		if status, _ := api.do("GET", "/api/me", nil); status != 401 {
			t.Errorf("me after the TYPO3 logout = %d, want 401", status)
		}
		if status, _ := web.do("GET", "/api/me", nil); status != 401 {
			t.Errorf("the web session after the TYPO3 logout = %d, want 401", status)
		}
	})
}
