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
func (b *beside) tokenOf(t *testing.T, uid int64, username string) *waymarktest.Client {
	t.Helper()
	ctx := context.Background()
	if err := live.KeepUser(ctx, b.env.DB, uid, username); err != nil {
		t.Fatal(err)
	}
	tok, err := access.IssueToken(ctx, b.env.DB, uid, "test", time.Now(), auth.MinCost)
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
