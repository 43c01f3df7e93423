package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"waymark/internal/access"
	"waymark/internal/auth"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store/storetest"
	"waymark/internal/typo3/bridge"
	"waymark/internal/typo3/live"
	"waymark/internal/typo3/typo3test"
	"waymark/internal/waymarktest"
)

// Bad sign-ins change nothing: a ticket signed with another secret, one
// that expired, one whose user TYPO3 disabled between ticket and use — each
// is refused with the sentence that says to open Waymark from TYPO3 again,
// and opens no session.
func TestATicketThatIsForgedExpiredOrForADisabledUserOpensNothing(t *testing.T) {
	typo3test.EachReal(t, func(t *testing.T, r *typo3test.Real) {
		b := besideReal(t, r)
		backend := r.Login(t, "editor", editorPassword)
		real := backend.Ticket(t, 2, 0)
		parsed, err := bridge.ParseTicket(r.Secret, real, time.Now())
		if err != nil {
			t.Fatalf("the module's ticket does not verify: %v", err)
		}
		now := time.Now().Unix()
		expired := parsed
		expired.IssuedAt, expired.Expires, expired.Nonce = now-120, now-60, strings.Repeat("a", 32)
		for name, ticket := range map[string]string{
			"another secret": bridge.SignTicket(strings.Repeat("x", 40), parsed),
			"expired":        bridge.SignTicket(r.Secret, expired),
			"tampered":       strings.Replace(real, ".", "x.", 1),
			"empty":          "",
		} {
			s := b.browser(t)
			status, body := s.do("GET", "/typo3/enter?ticket="+url.QueryEscape(ticket), nil)
			if status != 401 || !strings.Contains(string(body), "Open Waymark from the TYPO3 backend again") {
				t.Errorf("%s: enter = %d %.300s", name, status, body)
			}
			if status, _ := s.do("GET", "/api/me", nil); status != 401 {
				t.Errorf("%s: a session was opened: me = %d", name, status)
			}
		}
		r.PHP(t, fmt.Sprintf(`t3_dh(['be_users' => [%d => ['disable' => 1]]]);`, b.editor))
		defer r.PHP(t, fmt.Sprintf(`t3_dh(['be_users' => [%d => ['disable' => 0]]]);`, b.editor))
		s := b.browser(t)
		if status, body := s.enter(real); status != 401 {
			t.Errorf("a user disabled between ticket and use: %d %s", status, body)
		}
		var sessions int
		if err := b.env.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM sessions").Scan(&sessions); err != nil || sessions != 0 {
			t.Errorf("sessions after refused tickets = %d (%v), want 0", sessions, err)
		}
	})
}

// The extension answers only requests signed with its secret: a client
// with another secret is refused (nothing done), and a bridge URL that does
// not answer is a clear error.
func TestTheExtensionAnswersOnlyItsSecret(t *testing.T) {
	typo3test.EachReal(t, func(t *testing.T, r *typo3test.Real) {
		ctx := context.Background()
		wrong, err := bridge.NewClient(r.Base, strings.Repeat("w", 40), nil)
		if err != nil {
			t.Fatal(err)
		}
		var refused *bridge.RefusedError
		if _, err := wrong.Ping(ctx); !errors.As(err, &refused) || refused.Status != 401 || refused.Code != "bad_signature" {
			t.Errorf("ping with another secret = %v, want 401 bad_signature", err)
		}
		dead, _ := bridge.NewClient("http://127.0.0.1:1/", r.Secret, nil)
		if _, err := dead.Ping(ctx); !errors.Is(err, bridge.ErrUnreachable) {
			t.Errorf("ping of a URL that does not answer = %v, want ErrUnreachable", err)
		}
		if _, err := bridge.NewClient("cms.example.org", r.Secret, nil); err == nil {
			t.Error("a bridge URL without scheme was taken")
		}
		if _, err := bridge.NewClient(r.Base, "short", nil); err == nil {
			t.Error("a short secret was taken")
		}
	})
}

// tokenOf is an API token of TYPO3 user uid (kept in Waymark's be_users).
func (b *beside) tokenOf(t testing.TB, uid int64, username string) *waymarktest.Client {
	t.Helper()
	ctx := context.Background()
	if err := live.KeepUser(ctx, b.env.DB, uid, username); err != nil {
		t.Fatal(err)
	}
	tok, err := access.IssueToken(ctx, b.env.App.Directory, b.env.DB, uid, "test", time.Now(), auth.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return b.env.As(tok)
}

// proposeDescription has the scripted model propose one description of
// page 2 in a new run of c and returns the run and its card's digest.
func (b *beside) proposeDescription(t *testing.T, c *waymarktest.Client, value string) (string, string) {
	t.Helper()
	b.env.LLM.Add(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "update_page_metadata",
			Arguments: fmt.Sprintf(`{"page": 2, "fields": {"description": %q}}`, value)}}},
		llmtest.Reply{Content: "Done."})
	r := c.Do("POST", "/api/runs", map[string]any{"configuration": 9,
		"messages": []map[string]string{{"role": "user", "content": "Improve the description of page 2"}}})
	var run struct {
		UUID    string `json:"uuid"`
		Pending *struct {
			TurnDigest string `json:"turnDigest"`
		} `json:"pending"`
	}
	if r.Status != 201 || json.Unmarshal(r.Body, &run) != nil || run.Pending == nil {
		t.Fatalf("run = %d %s", r.Status, r.Body)
	}
	return run.UUID, run.Pending.TurnDigest
}

func (b *beside) liveDescription(t *testing.T) string {
	t.Helper()
	return b.r.PHP(t, `echo \TYPO3\CMS\Backend\Utility\BackendUtility::getRecord('pages', 2)['description'];`)
}

// TYPO3 that stops answering between the card and the answer: the approval
// fails clearly (write_target_unreachable) and nothing is written.
func TestTYPO3UnreachableAtTheAnswerWritesNothing(t *testing.T) {
	typo3test.EachReal(t, func(t *testing.T, r *typo3test.Real) {
		ctx := context.Background()
		target, _ := url.Parse(r.Base)
		proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
		inst, err := live.New(ctx, r.DB, r.Dialect, r.Sites, nil)
		if err != nil {
			t.Fatal(err)
		}
		client, err := bridge.NewClient(proxy.URL+"/", r.Secret, nil)
		if err != nil {
			t.Fatal(err)
		}
		b := besideReal(t, r)
		env := waymarktest.New(t, storetest.SQLite(t), "", &waymarktest.Options{TYPO3: inst, Bridge: client})
		b.env = env
		importConfiguration(t, b)
		editor := b.tokenOf(t, b.editor, "editor")
		before := b.liveDescription(t)
		uuid, digest := b.proposeDescription(t, editor, fmt.Sprintf("Never written %d.", time.Now().UnixNano()))
		proxy.Close()
		res := editor.Do("POST", "/api/runs/"+uuid+"/approval", map[string]any{"approve": true, "turnDigest": digest})
		if !strings.Contains(string(res.Body), "write_target_unreachable") {
			t.Errorf("approval with TYPO3 gone = %d %s, want the run failed with write_target_unreachable", res.Status, res.Body)
		}
		if now := b.liveDescription(t); now != before {
			t.Errorf("TYPO3 holds %q after the failed answer, want %q unchanged", now, before)
		}
	})
}

// An editor working in a draft workspace: the card says before the answer
// that the change lands as a draft in her workspace, and TYPO3 makes a
// workspace version for review — live unchanged; the result says where it
// landed. Back in live, the card says live.
func TestAnEditorInADraftWorkspaceGetsAWorkspaceVersion(t *testing.T) {
	typo3test.EachReal(t, func(t *testing.T, r *typo3test.Real) {
		b := besideReal(t, r)
		ws := r.PHP(t, fmt.Sprintf(`
			$c = \TYPO3\CMS\Core\Utility\GeneralUtility::makeInstance(\TYPO3\CMS\Core\Database\ConnectionPool::class)->getConnectionForTable('sys_workspace');
			$ws = (int)$c->select(['uid'], 'sys_workspace', ['title' => 'Redaktion', 'deleted' => 0])->fetchOne();
			if ($ws === 0) { $dh = t3_dh(['sys_workspace' => ['NEW1' => ['pid' => 0, 'title' => 'Redaktion', 'members' => 'be_users_%[1]d']]]); $ws = (int)$dh->substNEWwithIDs['NEW1']; }
			$c->update('be_users', ['workspace_id' => $ws], ['uid' => %[1]d]);
			$c->delete('pages', ['t3ver_oid' => 2, 't3ver_wsid' => $ws]); // an earlier run's draft
			echo $ws;`, b.editor))
		defer r.PHP(t, fmt.Sprintf(`\TYPO3\CMS\Core\Utility\GeneralUtility::makeInstance(\TYPO3\CMS\Core\Database\ConnectionPool::class)
			->getConnectionForTable('be_users')->update('be_users', ['workspace_id' => 0], ['uid' => %d]);`, b.editor))
		editor := b.tokenOf(t, b.editor, "editor")
		before := b.liveDescription(t)
		want := fmt.Sprintf("A draft for review, %d.", time.Now().UnixNano())
		uuid, digest := b.proposeDescription(t, editor, want)
		st := editor.Must("GET", "/api/runs/"+uuid, nil, 200).Map(t)
		landing := fmt.Sprint(st["pending"].(map[string]any)["calls"].([]any)[0].(map[string]any)["landing"])
		if landing != fmt.Sprintf("map[title:Redaktion workspace:%s]", ws) {
			t.Errorf("the card's landing = %s, want the workspace Redaktion (%s)", landing, ws)
		}
		res := editor.Do("POST", "/api/runs/"+uuid+"/approval", map[string]any{"approve": true, "turnDigest": digest})
		if res.Status != 200 {
			t.Fatalf("approval = %d %s", res.Status, res.Body)
		}
		if now := b.liveDescription(t); now != before {
			t.Errorf("live holds %q, want %q unchanged", now, before)
		}
		version := r.PHP(t, fmt.Sprintf(`$v = \TYPO3\CMS\Backend\Utility\BackendUtility::getWorkspaceVersionOfRecord(%s, 'pages', 2, 'description');
			echo $v['description'] ?? 'no version';`, ws))
		if version != want {
			t.Errorf("the workspace version holds %q, want %q", version, want)
		}
		if ev := string(editor.Must("GET", "/api/runs/"+uuid+"/events", nil, 200).Body); !strings.Contains(ev, `"landing":{"workspace":`+ws) {
			t.Errorf("the run's events do not say the change landed in workspace %s: %.3000s", ws, ev)
		}

		// The next card on that field shows her draft as the value now (what
		// TYPO3 shows her in the workspace, and what the write compares
		// with), so it applies over the draft instead of coming back as
		// changed in TYPO3; live still unchanged.
		second := want + " Revised."
		uuid, digest = b.proposeDescription(t, editor, second)
		st = editor.Must("GET", "/api/runs/"+uuid, nil, 200).Map(t)
		item := st["pending"].(map[string]any)["calls"].([]any)[0].(map[string]any)["preview"].([]any)[0].(map[string]any)
		if item["current"] != want {
			t.Errorf("the second card shows %q as the value now, want her draft %q (live: %q)", item["current"], want, before)
		}
		res = editor.Do("POST", "/api/runs/"+uuid+"/approval", map[string]any{"approve": true, "turnDigest": digest})
		if res.Status != 200 || strings.Contains(string(res.Body), "changed") {
			t.Fatalf("second approval = %d %s", res.Status, res.Body)
		}
		version = r.PHP(t, fmt.Sprintf(`$v = \TYPO3\CMS\Backend\Utility\BackendUtility::getWorkspaceVersionOfRecord(%s, 'pages', 2, 'description');
			echo $v['description'] ?? 'no version';`, ws))
		if version != second {
			t.Errorf("the workspace version holds %q after the second answer, want %q", version, second)
		}
		if now := b.liveDescription(t); now != before {
			t.Errorf("live holds %q after the second answer, want %q unchanged", now, before)
		}
	})
}

// A write sent again with its key — a retry after a lost answer, or after a
// crash between TYPO3's commit and Waymark's — applies nothing twice: the
// extension answers already_applied and TYPO3's history has one change.
func TestARetryOfAWriteWithItsKeyAppliesNothingTwice(t *testing.T) {
	typo3test.EachReal(t, func(t *testing.T, r *typo3test.Real) {
		b := besideReal(t, r)
		ctx := context.Background()
		client, _ := bridge.NewClient(r.Base, r.Secret, nil)
		before := b.liveDescription(t)
		want := fmt.Sprintf("Written once, %d.", time.Now().UnixNano())
		req := bridge.ApplyRequest{User: b.editor, Table: "pages", UID: 2, Key: "test/" + want,
			Fields: map[string]bridge.FieldChange{"description": {Old: before, New: want}}}
		history := func() string {
			return r.PHP(t, fmt.Sprintf(`echo \TYPO3\CMS\Core\Utility\GeneralUtility::makeInstance(\TYPO3\CMS\Core\Database\ConnectionPool::class)
				->getConnectionForTable('sys_history')->count('uid', 'sys_history', ['tablename' => 'pages', 'recuid' => 2, 'userid' => %d]);`, b.editor))
		}
		first, err := client.Apply(ctx, req)
		if err != nil || first.Status != "applied" {
			t.Fatalf("apply = %+v, %v", first, err)
		}
		after := history()
		again, err := client.Apply(ctx, req)
		if err != nil || again.Status != "already_applied" {
			t.Fatalf("apply again = %+v, %v; want already_applied", again, err)
		}
		if n := history(); n != after {
			t.Errorf("sys_history rows of the editor on pages:2: %s after the first write, %s after the retry", after, n)
		}
		// The same change under another key finds the value changed: a conflict, nothing written.
		req.Key += "/other"
		var refused *bridge.RefusedError
		if _, err := client.Apply(ctx, req); !errors.As(err, &refused) || refused.Code != "conflict" || refused.Current != want {
			t.Errorf("a second write over the shown value = %v, want a conflict naming %q", err, want)
		}
	})
}

// DataHandler refuses a change TYPO3 no longer allows — here the page was
// locked for editing in TYPO3 between the card and the answer: nothing is
// written, and the model is told TYPO3's own reason (without DataHandler's
// log prefix), so the tour goes on.
func TestADataHandlerRefusalComesBackWithTYPO3sReason(t *testing.T) {
	typo3test.EachReal(t, func(t *testing.T, r *typo3test.Real) {
		b := besideReal(t, r)
		editor := b.tokenOf(t, b.editor, "editor")
		before := b.liveDescription(t)
		uuid, digest := b.proposeDescription(t, editor, fmt.Sprintf("Refused by TYPO3, %d.", time.Now().UnixNano()))
		r.PHP(t, `t3_dh(['pages' => [2 => ['editlock' => 1]]]);`)
		defer r.PHP(t, `t3_dh(['pages' => [2 => ['editlock' => 0]]]);`)
		res := editor.Do("POST", "/api/runs/"+uuid+"/approval", map[string]any{"approve": true, "turnDigest": digest})
		if res.Status != 200 {
			t.Fatalf("approval = %d %s", res.Status, res.Body)
		}
		if now := b.liveDescription(t); now != before {
			t.Errorf("TYPO3 holds %q after the refusal, want %q unchanged", now, before)
		}
		reqs := b.env.LLM.Requests()
		last := reqs[len(reqs)-1].Messages
		told := last[len(last)-1].Content
		if !strings.Contains(told, "TYPO3 refused the change: Attempt to modify record pages:2") || strings.Contains(told, "[1.2]") {
			t.Errorf("the model was told %q, want TYPO3's reason without DataHandler's prefix", told)
		}
	})
}
