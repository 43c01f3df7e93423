package web_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	wt "waymark/internal/waymarktest"
)

// site is wt.Site with passwords for erika (de) and paula (en, approve), and
// an approved process skill "seo" (uid 12) on the chat configuration.
var site = strings.NewReplacer(
	"username: erika,", "username: erika, password: erika-pass-1234,",
	"username: paula,", "username: paula, password: paula-pass-1234,",
).Replace(wt.Site) + `
skillSources:
  - {uid: 2, type: backend, title: Site, trustLevel: first_party}
skills:
  - uid: 12
    source: 2
    identifier: seo
    enabled: true
    markdown: "---\nname: SEO optimieren\ndescription: Die Seite verbessern.\nprocess: true\nallowed-tools: [read_page, update_page_metadata, set_progress, highlight_record]\n---\nEine Änderung pro Schritt."
approvals:
  - {skill: 12, digest: current, approvedBy: 1}
attachments:
  - {configuration: 1, skill: 12, loadMode: always}
tools:
  - {name: highlight_record, enabled: true}
`

const seo = "12"

func newEnv(t *testing.T, db *store.DB) *wt.Env {
	t.Helper()
	return wt.New(t, db, site, nil)
}

// browser is a user in a browser: a cookie jar, htmx's request header and
// the CSRF header the page's hx-headers send.
type browser struct {
	t    testing.TB
	e    *wt.Env
	c    *http.Client
	csrf string
}

func newBrowser(t testing.TB, e *wt.Env) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, e: e, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type answer struct {
	Status int
	Body   string
	Header http.Header
}

func (b *browser) do(method, path string, form url.Values, lang string) answer {
	b.t.Helper()
	if form == nil {
		return b.send(method, path, nil, "", lang)
	}
	return b.send(method, path, strings.NewReader(form.Encode()), "application/x-www-form-urlencoded", lang)
}

// send is do with a body of the given content type.
func (b *browser) send(method, path string, body io.Reader, contentType, lang string) answer {
	b.t.Helper()
	req, err := http.NewRequest(method, b.e.URL+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if method == http.MethodPost {
		req.Header.Set("HX-Request", "true")
		if b.csrf != "" {
			req.Header.Set("X-CSRF-Token", b.csrf)
		}
	}
	if lang != "" {
		req.Header.Set("Accept-Language", lang)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return answer{Status: resp.StatusCode, Body: string(data), Header: resp.Header}
}

func (b *browser) get(path string) answer { b.t.Helper(); return b.do(http.MethodGet, path, nil, "") }

func (b *browser) post(path string, form url.Values) answer {
	b.t.Helper()
	return b.do(http.MethodPost, path, form, "")
}

// csrfFromPage reads the token the page sends (its body's hx-headers).
var hxHeaders = regexp.MustCompile(`hx-headers="\{&#34;X-CSRF-Token&#34;:&#34;([^&]+)&#34;\}"`)

// login signs in through the login form and reads the CSRF token from the page.
func login(t testing.TB, e *wt.Env, user, password string) *browser {
	t.Helper()
	b := newBrowser(t, e)
	a := b.post("/login", url.Values{"username": {user}, "password": {password}})
	if a.Header.Get("HX-Redirect") != "/" {
		t.Fatalf("login %s = %d %q, want HX-Redirect /: %s", user, a.Status, a.Header.Get("HX-Redirect"), a.Body)
	}
	page := b.get("/chat")
	m := hxHeaders.FindStringSubmatch(page.Body)
	if m == nil {
		t.Fatalf("GET /chat after login has no CSRF header: %d %s", page.Status, page.Body)
	}
	b.csrf = m[1]
	return b
}

// contains fails unless every text is in the answer.
func contains(t *testing.T, what string, a answer, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if !strings.Contains(a.Body, s) {
			t.Errorf("%s: %q missing in:\n%s", what, s, a.Body)
		}
	}
}

func lacks(t *testing.T, what string, a answer, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(a.Body, s) {
			t.Errorf("%s: %q must not appear in:\n%s", what, s, a.Body)
		}
	}
}

func write(id, fields string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: "update_page_metadata", Arguments: `{"page": 1, "fields": ` + fields + `}`}}}
}

func say(s string) llmtest.Reply { return llmtest.Reply{Content: s} }

var convPath = regexp.MustCompile(`^/chat/(\d+)$`)

// startTour starts a conversation from the page picker and returns its path.
func startTour(t *testing.T, b *browser, page, lang, skill string) string {
	t.Helper()
	a := b.post("/chat", url.Values{"page": {page}, "language": {lang}, "skill": {skill}})
	to := a.Header.Get("HX-Redirect")
	if !convPath.MatchString(to) {
		t.Fatalf("POST /chat = %d, HX-Redirect %q: %s", a.Status, to, a.Body)
	}
	b.e.App.Chat.Wait()
	return to
}

var digest = regexp.MustCompile(`name="turnDigest" value="([^"]+)"`)

func turnDigest(t *testing.T, a answer) string {
	t.Helper()
	m := digest.FindStringSubmatch(a.Body)
	if m == nil {
		t.Fatalf("no card in:\n%s", a.Body)
	}
	return m[1]
}
