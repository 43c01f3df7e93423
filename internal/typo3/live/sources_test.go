package live_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"waymark/internal/access"
	"waymark/internal/clock"
	"waymark/internal/content"
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

// source is one place users and content come from, with the demo site in
// it: the built-in tables, or a TYPO3 database made by typo3.CreateDemo.
type source struct {
	name string
	env  *waymarktest.Env
	t3   *sql.DB // nil for the built-in source
	d    typo3.Dialect
}

// t3exec changes the TYPO3 database as a TYPO3 editor would (the
// built-in source has none: the test skips such a step there).
func (s *source) t3exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if s.d == typo3.Postgres {
		query = pgBind(query)
	}
	if _, err := s.t3.Exec(query, args...); err != nil {
		t.Fatalf("typo3 %s: %v", query, err)
	}
}

func pgBind(q string) string {
	out, n := []byte{}, 0
	for i := 0; i < len(q); i++ {
		switch q[i] {
		case '?':
			n++
			out = append(out, fmt.Sprintf("$%d", n)...)
		case '`':
			out = append(out, '"')
		default:
			out = append(out, q[i])
		}
	}
	return string(out)
}

// eachSource runs fn against the built-in source and against TYPO3 on
// MariaDB and on PostgreSQL, each with the demo site and a fresh Waymark
// database: the same expectations for every source.
func eachSource(t *testing.T, fn func(t *testing.T, s *source)) {
	t.Helper()
	t.Run("builtin", func(t *testing.T) {
		fn(t, &source{name: "builtin", env: waymarktest.New(t, storetest.SQLite(t), string(demo.Fixture), nil)})
	})
	t.Run("typo3-mariadb", func(t *testing.T) { fn(t, typo3Source(t, typo3test.MariaDB(t))) })
	t.Run("typo3-postgres", func(t *testing.T) { fn(t, typo3Source(t, typo3test.Postgres(t))) })
}

// typo3Source makes the demo TYPO3 database on t3 and a Waymark beside it
// (besideTYPO3).
func typo3Source(t *testing.T, t3 typo3test.DB) *source {
	t.Helper()
	typo3test.Demo(t, t3)
	return &source{name: string(t3.Dialect), env: besideTYPO3(t, t3.DB, t3.Dialect, ""), t3: t3.DB, d: t3.Dialect}
}

// answer is what a request answered, for comparing sources.
type answer struct {
	Status int
	Body   any
}

func ask(t *testing.T, s *source, token, method, path string, body any) answer {
	t.Helper()
	r := s.env.As(token).Do(method, path, body)
	var v any
	if len(r.Body) > 0 {
		if err := json.Unmarshal(r.Body, &v); err != nil {
			v = string(r.Body)
		}
	}
	return answer{r.Status, v}
}

var demoTokens = map[string]string{"admin": "demo-token-admin", "erika": "demo-token-erika", "max": "demo-token-max", "paula": "demo-token-paula"}

// The page tree, every page's preview in both languages and the caller's
// own rights answer alike for every editor of the demo, whether the site
// comes from Waymark's tables or from TYPO3 on MariaDB or PostgreSQL: the
// page-show rule, mounts, the translation rule and the root level are
// decided above the seam.
func TestEverySourceAnswersTheDemoReadsAlike(t *testing.T) {
	var want map[string]answer
	eachSource(t, func(t *testing.T, s *source) {
		got := map[string]answer{}
		for user, token := range demoTokens {
			got[user+" GET /api/pages"] = ask(t, s, token, "GET", "/api/pages", nil)
			for _, page := range []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 14, 20, 21, 99} {
				for _, lang := range []int64{0, 1} {
					path := fmt.Sprintf("/api/pages/%d/preview?language=%d", page, lang)
					got[user+" GET "+path] = ask(t, s, token, "GET", path, nil)
				}
			}
			me := ask(t, s, token, "GET", "/api/me", nil)
			if m, ok := me.Body.(map[string]any); ok {
				delete(m, "groups") // TYPO3 lists subgroups as well: compared below
				delete(m, "serviceAccount")
			}
			got[user+" GET /api/me"] = me
		}
		// Fixed expectations, whatever the source.
		for key, status := range map[string]int{
			"erika GET /api/pages/1/preview?language=0":  200,
			"erika GET /api/pages/1/preview?language=1":  200,
			"max GET /api/pages/1/preview?language=0":    404, // outside max's mount
			"max GET /api/pages/4/preview?language=1":    200,
			"erika GET /api/pages/20/preview?language=0": 404, // the intranet: not in erika's mounts
			"admin GET /api/pages/20/preview?language=0": 200,
			"admin GET /api/pages/99/preview?language=0": 404,
		} {
			if got[key].Status != status {
				t.Errorf("%s: %s = %d, want %d: %v", s.name, key, got[key].Status, status, got[key].Body)
			}
		}
		if want == nil {
			want = got
			return
		}
		for k, w := range want {
			if g := got[k]; !reflect.DeepEqual(g, w) {
				t.Errorf("%s: %s =\n  %d %v\nbuilt-in answered\n  %d %v", s.name, k, g.Status, g.Body, w.Status, w.Body)
			}
		}
	})
}

// A TYPO3 backend user logs in to Waymark with the TYPO3 password; a wrong
// password and an unknown user are refused alike.
func TestTYPO3UserLogsInWithTheTYPO3Password(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		c := s.env.As("")
		r := c.Do("POST", "/api/login", map[string]string{"username": "erika", "password": "erika-demo-pass"})
		if r.Status != 200 {
			t.Fatalf("%s: login erika = %d %s", s.name, r.Status, r.Body)
		}
		// The session the login made is Waymark's: the next request carries
		// its cookie, not the password, and is erika's.
		req, _ := http.NewRequest("GET", s.env.URL+"/api/me", nil)
		for _, ck := range (&http.Response{Header: r.Header}).Cookies() {
			req.AddCookie(ck)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var me struct{ Username string }
		_ = json.NewDecoder(resp.Body).Decode(&me)
		resp.Body.Close()
		if resp.StatusCode != 200 || me.Username != "erika" {
			t.Errorf("%s: GET /api/me with the session cookie = %d %q, want erika", s.name, resp.StatusCode, me.Username)
		}
		for _, bad := range []map[string]string{{"username": "erika", "password": "wrong"}, {"username": "nobody", "password": "erika-demo-pass"}} {
			if r := c.Do("POST", "/api/login", bad); r.Status != 401 {
				t.Errorf("%s: login %v = %d %s, want 401", s.name, bad, r.Status, r.Body)
			}
		}
		if s.t3 == nil {
			return
		}
		// In TYPO3: an expired account, and a hash kind Waymark cannot
		// verify (phpass, from before TYPO3 9), are refused like a wrong password.
		s.t3exec(t, "UPDATE `be_users` SET `endtime` = ? WHERE `username` = 'erika'", time.Now().Add(-time.Minute).Unix())
		if r := c.Do("POST", "/api/login", map[string]string{"username": "erika", "password": "erika-demo-pass"}); r.Status != 401 {
			t.Errorf("%s: login of an expired TYPO3 user = %d %s, want 401", s.name, r.Status, r.Body)
		}
		s.t3exec(t, "UPDATE `be_users` SET `password` = '$P$BXqO2yLr1PFhRJ8e2XqO8Vb5rC2nJ/0', `endtime` = 0 WHERE `username` = 'max'")
		if r := c.Do("POST", "/api/login", map[string]string{"username": "max", "password": "max-demo-pass"}); r.Status != 401 {
			t.Errorf("%s: login with a phpass hash = %d %s, want 401", s.name, r.Status, r.Body)
		}
		if r := c.Do("POST", "/api/login", map[string]string{"username": "paula", "password": "paula-demo-pass"}); r.Status != 200 {
			t.Errorf("%s: login paula = %d %s", s.name, r.Status, r.Body)
		}
		// A TYPO3 user Waymark never heard of logs in: Waymark keeps a row
		// for the uid (its session names it), and the account is TYPO3's.
		hash, err := typo3.HashArgon2iPassword("neu-password", typo3.Argon2Params{Memory: 1024, Time: 1, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		s.t3exec(t, "INSERT INTO `be_users` (`uid`, `pid`, `username`, `password`, `usergroup`, `options`, `lang`) VALUES (50, 0, 'neu', ?, '1', 3, 'default')", hash)
		r = c.Do("POST", "/api/login", map[string]string{"username": "neu", "password": "neu-password"})
		var answer struct{ User struct{ UID int64 } }
		_ = json.Unmarshal(r.Body, &answer)
		if r.Status != 200 || answer.User.UID != 50 {
			t.Errorf("%s: login of a new TYPO3 user = %d %s, want uid 50", s.name, r.Status, r.Body)
		}
		var kept string
		if err := s.env.DB.QueryRow(context.Background(), "SELECT username FROM be_users WHERE uid = 50").Scan(&kept); err != nil || kept != "neu" {
			t.Errorf("%s: Waymark's row of TYPO3 user 50 = %q (%v), want neu", s.name, kept, err)
		}
	})
}

// Rights are read live: a change made in TYPO3 counts at the next request —
// a disabled user is refused, an expired one too, a mount taken away hides
// the page, a group hidden in TYPO3 grants nothing.
func TestARightsChangeInTYPO3CountsAtTheNextRequest(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		if s.t3 == nil {
			t.Skip("the built-in source changes through Waymark's administration (its own tests)")
		}
		erika, maxc := s.env.As("demo-token-erika"), s.env.As("demo-token-max")
		erika.Must("GET", "/api/pages/2/preview?language=0", nil, 200)
		maxc.Must("GET", "/api/pages/4/preview?language=0", nil, 200)

		s.t3exec(t, "UPDATE `be_users` SET `disable` = 1 WHERE `username` = 'erika'")
		erika.Must("GET", "/api/me", nil, 401)
		s.t3exec(t, "UPDATE `be_users` SET `disable` = 0, `endtime` = ? WHERE `username` = 'erika'", time.Now().Add(-time.Minute).Unix())
		erika.Must("GET", "/api/me", nil, 401)
		s.t3exec(t, "UPDATE `be_users` SET `endtime` = 0 WHERE `username` = 'erika'")
		erika.Must("GET", "/api/me", nil, 200)

		// max's pages come through his group's mount (page 3, Services).
		s.t3exec(t, "UPDATE `be_users` SET `db_mountpoints` = '', `options` = 0 WHERE `username` = 'max'")
		maxc.Must("GET", "/api/pages/4/preview?language=1", nil, 404)
		s.t3exec(t, "UPDATE `be_users` SET `options` = 3 WHERE `username` = 'max'")
		maxc.Must("GET", "/api/pages/4/preview?language=1", nil, 200)
		s.t3exec(t, "UPDATE `be_groups` SET `hidden` = 1")
		maxc.Must("GET", "/api/pages/4/preview?language=1", nil, 404)
	})
}

// A process proposes changes, so on a page the editor may only read it is
// refused (409 page_read_only, nothing created) on every source, by the one
// rule above the seam; beside TYPO3 the rule reads the page's rights live:
// the edit bits granted in TYPO3 let the same start begin.
func TestAProcessOnAReadOnlyPageIsRefusedOnEverySource(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		erika := s.env.As("demo-token-erika")
		const services, about, seo = 3, 2, 1 // erika may only show Services
		start := map[string]any{"page": services, "language": 0, "skill": seo}
		before := erika.Must("GET", "/api/conversations", nil, http.StatusOK).Body
		if r := erika.Do("POST", "/api/conversations", start); r.Status != http.StatusConflict || r.ErrorCode() != "page_read_only" {
			t.Fatalf("a process on Services (show only) = %d %s, want 409 page_read_only", r.Status, r.Body)
		}
		if after := erika.Must("GET", "/api/conversations", nil, http.StatusOK).Body; string(after) != string(before) {
			t.Errorf("the refused start created a conversation: %s", after)
		}
		erika.Must("POST", "/api/conversations", map[string]any{"page": about, "language": 0, "skill": seo}, http.StatusCreated)
		if s.t3 == nil {
			return // the built-in source's rights change through Waymark's administration (its own tests)
		}
		s.t3exec(t, "UPDATE `pages` SET `perms_everybody` = 27 WHERE `uid` = ?", services)
		erika.Must("POST", "/api/conversations", start, http.StatusCreated)
	})
}

// An administrator sets the grants Waymark keeps for a user or a group on
// every source, and nothing else changes; the holder has them at the next
// request. Beside TYPO3 the lists are TYPO3's users and groups — one who
// never logged in to Waymark and a group Waymark has no row of too — and a
// grant set on them makes Waymark's row under the TYPO3 uid. An unknown
// grant is refused 400 and an unknown uid 404, changing nothing.
func TestAdministratorsSetWaymarkGrantsOnEverySource(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		admin, maxc := s.env.As("demo-token-admin"), s.env.As("demo-token-max")
		type account struct {
			UID      int64    `json:"uid"`
			Username string   `json:"username"`
			Groups   []int64  `json:"groups"`
			Grants   []string `json:"grants"`
		}
		if s.t3 != nil { // a TYPO3 user and group Waymark has never seen
			s.t3exec(t, "INSERT INTO `be_groups` (`uid`, `pid`, `title`) VALUES (60, 0, 'Freigabe')")
			s.t3exec(t, "INSERT INTO `be_users` (`uid`, `pid`, `username`, `usergroup`, `lang`) VALUES (50, 0, 'neu', '60', 'default')")
		}
		var users struct {
			Users []account `json:"users"`
		}
		if err := json.Unmarshal(admin.Must("GET", "/api/admin/users", nil, 200).Body, &users); err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, u := range users.Users {
			names[u.Username] = true
		}
		for _, want := range []string{"admin", "erika", "max", "paula"} {
			if !names[want] {
				t.Errorf("%s: the users list lacks %s: %v", s.name, want, names)
			}
		}
		if s.t3 != nil && !names["neu"] {
			t.Errorf("%s: the users list lacks the TYPO3 user who never logged in: %v", s.name, names)
		}

		before := admin.Must("GET", "/api/admin/users/3", nil, 200).Body
		if r := admin.Do("PUT", "/api/admin/users/3/grants", map[string]any{"grants": []string{"approve", "publish"}}); r.Status != 400 || r.ErrorCode() != "invalid" {
			t.Errorf("%s: an unknown grant = %d %s, want 400 invalid", s.name, r.Status, r.Body)
		}
		if after := admin.Must("GET", "/api/admin/users/3", nil, 200).Body; string(after) != string(before) {
			t.Errorf("%s: a refused change changed the user: %s", s.name, after)
		}
		admin.Must("PUT", "/api/admin/users/999/grants", map[string]any{"grants": []string{"approve"}}, 404)
		admin.Must("PUT", "/api/admin/groups/999/grants", map[string]any{"grants": []string{"approve"}}, 404)

		var got account
		if err := json.Unmarshal(admin.Must("PUT", "/api/admin/users/3/grants", map[string]any{"grants": []string{"approve"}}, 200).Body, &got); err != nil {
			t.Fatal(err)
		}
		var was account
		_ = json.Unmarshal(before, &was)
		if got.Username != "max" || !slices.Equal(got.Grants, []string{"approve"}) || !slices.Equal(got.Groups, was.Groups) {
			t.Errorf("%s: max after his grants were set = %+v, want approve and his groups %v", s.name, got, was.Groups)
		}
		if me := maxc.Must("GET", "/api/me", nil, 200).Map(t); !strings.Contains(fmt.Sprint(me["grants"]), "approve") {
			t.Errorf("%s: max's /api/me grants = %v, want approve", s.name, me["grants"])
		}

		if s.t3 == nil {
			return
		}
		if err := json.Unmarshal(admin.Must("PUT", "/api/admin/users/50/grants", map[string]any{"grants": []string{"skill_approve"}}, 200).Body, &got); err != nil {
			t.Fatal(err)
		}
		if got.Username != "neu" || !slices.Equal(got.Grants, []string{"skill_approve"}) {
			t.Errorf("%s: the TYPO3 user who never logged in, after his grants were set = %+v", s.name, got)
		}
		var g struct {
			Title  string   `json:"title"`
			Grants []string `json:"grants"`
		}
		if err := json.Unmarshal(admin.Must("PUT", "/api/admin/groups/60/grants", map[string]any{"grants": []string{"approve"}}, 200).Body, &g); err != nil {
			t.Fatal(err)
		}
		if g.Title != "Freigabe" || !slices.Equal(g.Grants, []string{"approve"}) {
			t.Errorf("%s: TYPO3's group 60 after its grants were set = %+v", s.name, g)
		}
		if list := string(admin.Must("GET", "/api/admin/groups", nil, 200).Body); !strings.Contains(list, "Freigabe") {
			t.Errorf("%s: the groups list lacks TYPO3's group 60: %s", s.name, list)
		}
		// A token for a TYPO3 user Waymark has never seen works at once.
		s.t3exec(t, "INSERT INTO `be_users` (`uid`, `pid`, `username`, `usergroup`, `lang`) VALUES (51, 0, 'gast', '1', 'default')")
		var tok struct {
			Token string `json:"token"`
		}
		if err := json.Unmarshal(admin.Must("POST", "/api/admin/users/51/tokens", map[string]any{"label": "mcp"}, 201).Body, &tok); err != nil {
			t.Fatal(err)
		}
		if me := s.env.As(tok.Token).Must("GET", "/api/me", nil, 200).Map(t); me["username"] != "gast" {
			t.Errorf("%s: the new TYPO3 user's token answers %v, want gast", s.name, me["username"])
		}
		// erika joins the group in TYPO3: its grant is hers at the next request.
		s.t3exec(t, "UPDATE `be_users` SET `usergroup` = '1,60' WHERE `username` = 'erika'")
		if me := s.env.As("demo-token-erika").Must("GET", "/api/me", nil, 200).Map(t); !strings.Contains(fmt.Sprint(me["grants"]), "approve") {
			t.Errorf("%s: erika's grants in group 60 = %v, want approve", s.name, me["grants"])
		}
	})
}

// webAs sends a request to the web UI as the holder of token (htmx's
// header, a form body when form is not nil) and returns status, HX-Redirect
// and body.
func webAs(t *testing.T, s *source, token, method, path string, form url.Values) (int, string, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, s.env.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("HX-Request", "true")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("HX-Redirect"), string(b)
}

// Beside TYPO3 the administration's screens list TYPO3's users and groups,
// show what comes from TYPO3 as such, offer no way to create or change it,
// and set the grants Waymark keeps — a wrong grant is refused in the form
// and changes nothing.
func TestBesideTYPO3TheAdminScreensSetTheGrantsOnly(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		if s.t3 == nil {
			t.Skip("TYPO3 only: the administration's own tests cover the built-in screens")
		}
		const admin = "demo-token-admin"
		s.t3exec(t, "INSERT INTO `be_users` (`uid`, `pid`, `username`, `usergroup`, `lang`) VALUES (50, 0, 'neu', '1', 'default')")
		status, _, page := webAs(t, s, admin, "GET", "/admin/users", nil)
		if status != 200 || !strings.Contains(page, ">neu</a>") || !strings.Contains(page, "Users come from TYPO3") ||
			strings.Contains(page, `href="/admin/users/new"`) {
			t.Errorf("%s: users screen = %d, want TYPO3's users with the note and no new-user link:\n%s", s.name, status, page)
		}
		status, _, page = webAs(t, s, admin, "GET", "/admin/users/3", nil)
		if status != 200 || !strings.Contains(page, "come from TYPO3 and are changed there") || strings.Contains(page, `name="username"`) ||
			strings.Contains(page, "/admin/users/3/active") || !strings.Contains(page, `name="grants" value="approve"`) {
			t.Errorf("%s: max's screen = %d, want TYPO3's facts and the grants form only:\n%s", s.name, status, page)
		}
		status, to, _ := webAs(t, s, admin, "POST", "/admin/users/3", url.Values{"grants": {"approve"}})
		if status != 200 || to != "/admin/users/3?done=saved" {
			t.Errorf("%s: saving max's grants = %d to %q, want the saved screen", s.name, status, to)
		}
		status, _, page = webAs(t, s, admin, "POST", "/admin/users/3", url.Values{"grants": {"publish"}})
		if status != 200 || !strings.Contains(page, `class="field-error">Not valid: unknown grant &#34;publish&#34;`) {
			t.Errorf("%s: an unknown grant in the form = %d, want the form again naming it:\n%s", s.name, status, page)
		}
		if a := s.env.As(admin).Must("GET", "/api/admin/users/3", nil, 200).Map(t); fmt.Sprint(a["grants"]) != "[approve]" {
			t.Errorf("%s: max's grants after the forms = %v, want [approve]", s.name, a["grants"])
		}
		status, _, page = webAs(t, s, admin, "GET", "/admin/groups", nil)
		if status != 200 || !strings.Contains(page, "Groups come from TYPO3") || strings.Contains(page, `href="/admin/groups/new"`) {
			t.Errorf("%s: groups screen = %d:\n%s", s.name, status, page)
		}
		if status, to, _ := webAs(t, s, admin, "POST", "/admin/groups/2", url.Values{"grants": {"approve"}}); status != 200 || to != "/admin/groups/2?saved=1" {
			t.Errorf("%s: saving group 2's grants = %d to %q", s.name, status, to)
		}
		if g := s.env.As(admin).Must("GET", "/api/admin/groups/2", nil, 200).Map(t); fmt.Sprint(g["grants"]) != "[approve]" {
			t.Errorf("%s: group 2's grants after the form = %v, want [approve]", s.name, g["grants"])
		}
	})
}

// A page title changed in TYPO3 is what the next preview shows.
func TestAContentChangeInTYPO3ShowsAtTheNextRead(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		if s.t3 == nil {
			t.Skip("TYPO3 only")
		}
		s.t3exec(t, "UPDATE `pages` SET `title` = 'Changed in TYPO3' WHERE `uid` = 2")
		r := s.env.As("demo-token-erika").Must("GET", "/api/pages/2/preview?language=0", nil, 200)
		if !contains(string(r.Body), "Changed in TYPO3") {
			t.Errorf("%s: preview of page 2 = %s, want the title changed in TYPO3", s.name, r.Body)
		}
	})
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// tourSite adds to the demo a configuration on the scripted model and an
// approved process skill: what the guided tour below runs on.
const tourSite = `
configurations:
  - {uid: 9, identifier: scripted, name: Scripted, active: true, groups: [1, 2, 3],
     provider: {type: openai, baseUrl: "{{LLM}}", apiKey: sk-scenario-secret, model: m},
     contextWindow: 32000, maxOutputTokens: 1000, requireSecondApprover: false, privacy: metadata}
skillSources:
  - {uid: 9, type: backend, title: Tour, trustLevel: first_party}
skills:
  - uid: 19
    source: 9
    identifier: seo-tour
    enabled: true
    markdown: "---\nname: SEO tour\ndescription: Improve the page.\nprocess: true\nallowed-tools: [read_page, highlight_record, update_page_metadata, update_content, set_progress]\n---\nOne change per step."
approvals:
  - {skill: 19, digest: current, approvedBy: 1}
attachments:
  - {configuration: 9, skill: 19, loadMode: always}
`

func (s *source) importText(t *testing.T, text string) {
	t.Helper()
	ctx := context.Background()
	doc, err := fixture.Decode([]byte(strings.ReplaceAll(text, "{{LLM}}", s.env.LLM.URL())), "tour.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.env.DB.InTx(ctx, func(tx *store.Tx) error {
		_, err := fixture.ImportTx(ctx, tx, time.Now(), s.env.App.FixtureOptions(), doc)
		return err
	}); err != nil {
		t.Fatalf("import: %v", err)
	}
}

// A guided SEO tour through the HTTP API — started on a page the editor may
// work on, its cards showing the page's current values, answered skip and
// keep, ended — runs alike on every source; on a page outside the editor's
// mounts the start is refused alike (the subject check).
func TestAGuidedTourRunsAlikeOnEverySource(t *testing.T) {
	var want []string
	eachSource(t, func(t *testing.T, s *source) {
		s.importText(t, tourSite)
		update := func(id, fields string) llmtest.Reply {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: "update_page_metadata", Arguments: `{"page": 2, "fields": ` + fields + `}`}}}
		}
		if err := s.env.App.Tools.SetEnabled(context.Background(), "highlight_record", true); err != nil {
			t.Fatal(err)
		}
		call := func(id, name, args string) llm.ToolCall { return llm.ToolCall{ID: id, Name: name, Arguments: args} }
		s.env.LLM.Add(
			// Reads first: the page as the editor may read it, then highlight
			// targets — an element of the subject page in its language (a
			// target), its German translation, an element of another page and
			// a deleted one (none a target).
			llmtest.Reply{ToolCalls: []llm.ToolCall{
				call("r1", "read_page", `{"page": 2}`),
				call("h1", "highlight_record", `{"table": "tt_content", "uid": 110}`),
				call("h2", "highlight_record", `{"table": "tt_content", "uid": 111}`),
				call("h3", "highlight_record", `{"table": "tt_content", "uid": 100}`),
				call("h4", "highlight_record", `{"table": "tt_content", "uid": 141}`),
			}},
			update("c1", `{"seoTitle": "About Nordlicht Digital"}`),
			update("c2", `{"description": "Who we are and how we work."}`),
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p", Name: "set_progress", Arguments: `{"current": 2, "total": 2, "completed": true}`}}},
			llmtest.Reply{Content: "Done."},
		)
		var got []string
		note := func(format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) }
		maxc := s.env.As("demo-token-max")
		r := maxc.Do("POST", "/api/conversations", map[string]any{"page": 2, "language": 0, "skill": 19, "configuration": 9})
		note("max starts on page 2: %d", r.Status)
		c := s.env.As("demo-token-erika")
		base := tourOfAbout(t, c)
		for _, answer := range []string{"skip", "keep"} {
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
			c.Must("POST", base+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": answer}, 202)
		}
		view := settle(t, c, base)
		note("status %v outcomes %v", view["status"], view["outcomes"])
		end := c.Must("POST", base+"/end-tour", nil, 200)
		var ended map[string]any
		_ = json.Unmarshal(end.Body, &ended)
		note("summary %v", ended["summary"])
		// What the tools answered the model (the last request holds them all).
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
		note("highlight %v", view["highlight"])
		// Open-point visibility: the skipped card is an open point of page 2,
		// which erika and the admin may see and max (outside his mounts) not.
		for _, who := range []string{"erika", "max", "admin"} {
			for _, path := range []string{"/api/open-points", "/api/pages/2/open-points"} {
				a := ask(t, s, demoTokens[who], "GET", path, nil)
				dropTimes(a.Body)
				note("%s GET %s: %d %v", who, path, a.Status, a.Body)
			}
		}
		if s.t3 != nil {
			// Table and field rights read live from TYPO3: without the
			// non-exclude right on pages.seo_title the open point on that
			// field is not erika's to see; without tt_content in her group's
			// tables the preview shows no content elements.
			erikaPoints := func() string {
				return string(s.env.As("demo-token-erika").Must("GET", "/api/pages/2/open-points", nil, 200).Body)
			}
			elements := func() int {
				var p struct{ Elements []any }
				s.env.As("demo-token-erika").Must("GET", "/api/pages/2/preview?language=0", nil, 200).JSON(t, &p)
				return len(p.Elements)
			}
			if !strings.Contains(erikaPoints(), "seoTitle") || elements() == 0 {
				t.Fatalf("%s: before the change erika sees %s and %d elements", s.name, erikaPoints(), elements())
			}
			s.t3exec(t, "UPDATE `be_groups` SET `non_exclude_fields` = 'pages:description' WHERE `uid` = 1")
			if got := erikaPoints(); strings.Contains(got, "seoTitle") {
				t.Errorf("%s: without the right on pages:seo_title erika still sees %s", s.name, got)
			}
			s.t3exec(t, "UPDATE `be_groups` SET `tables_select` = 'pages', `tables_modify` = 'pages' WHERE `uid` = 1")
			if n := elements(); n != 0 {
				t.Errorf("%s: without tt_content in her tables erika's preview shows %d elements", s.name, n)
			}
			var title string
			q := "SELECT `seo_title` FROM `pages` WHERE `uid` = 2"
			if s.d == typo3.Postgres {
				q = pgBind(q)
			}
			if err := s.t3.QueryRow(q).Scan(&title); err != nil || title == "About Nordlicht Digital" {
				t.Errorf("%s: TYPO3's seo_title of page 2 = %q (%v): skip and keep must write nothing", s.name, title, err)
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
	if len(want) > 0 && !strings.HasPrefix(want[0], "max starts on page 2: 404") {
		t.Errorf("max started a tour outside his mounts: %s", want[0])
	}
	for _, line := range []string{`tool h1: {"highlighted":{"table":"tt_content","uid":110}}`,
		`tool h3: {"error":"not a highlight target of this run"}`, "highlight map[table:tt_content uid:110]"} {
		if !slices.Contains(want, line) {
			t.Errorf("the tour lacks %s", line)
		}
	}
	for _, line := range want {
		if strings.HasPrefix(line, "max GET /api/pages/2/open-points") && !strings.Contains(line, ": 404") ||
			strings.HasPrefix(line, "max GET /api/open-points") && !strings.Contains(line, "openPoints:[]") {
			t.Errorf("max sees an open point outside his mounts: %s", line)
		}
	}
}

func settle(t *testing.T, c *waymarktest.Client, base string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var view map[string]any
		c.Must("GET", base, nil, 200).JSON(t, &view)
		if view["status"] != "processing" || time.Now().After(deadline) {
			return view
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// While the records come from TYPO3, the built-in writer (Waymark's own
// copy) refuses: an approved change would otherwise be recorded and never
// shown. Nothing is written, in TYPO3 or in Waymark's history.
func TestTheBuiltInWriterRefusesWhileRecordsComeFromTYPO3(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		if s.t3 == nil {
			t.Skip("TYPO3 only: the built-in writer's own tests cover the built-in source")
		}
		ctx := context.Background()
		w := content.NewWriter(s.env.DB, s.env.App.Source, access.NewChecker(s.env.DB, s.env.App.Source, s.env.App.Directory), clock.Real{})
		_, err := w.Write(ctx, content.WriteRequest{Table: "pages", UID: 2, Fields: map[string]string{"seoTitle": "x"}, User: 1})
		if !errors.Is(err, content.ErrExternalSource) {
			t.Fatalf("%s: Write = %v, want ErrExternalSource", s.name, err)
		}
		var n int
		if err := s.env.DB.QueryRow(ctx, "SELECT count(*) FROM record_history").Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d history rows (%v), want none", s.name, n, err)
		}
		var title string
		q := "SELECT `seo_title` FROM `pages` WHERE `uid` = 2"
		if s.d == typo3.Postgres {
			q = pgBind(q)
		}
		if err := s.t3.QueryRow(q).Scan(&title); err != nil || title == "x" {
			t.Errorf("%s: TYPO3's seo_title = %q (%v)", s.name, title, err)
		}
	})
}

// dropTimes removes the createdAt stamps from an answer (they differ between runs).
func dropTimes(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "createdAt")
		for _, e := range x {
			dropTimes(e)
		}
	case []any:
		for _, e := range x {
			dropTimes(e)
		}
	}
}

// Beside TYPO3, Waymark's administration does not create or change users
// and groups: they are TYPO3's. The refusal names where to do it.
func TestBesideTYPO3UsersAndGroupsAreNotAdministeredInWaymark(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		if s.t3 == nil {
			t.Skip("TYPO3 only: the administration's own tests cover the built-in directory")
		}
		admin := s.env.As("demo-token-admin")
		for _, c := range []struct {
			path string
			body any
		}{
			{"/api/admin/users", map[string]any{"username": "neu", "password": "a-long-password-1", "groups": []int64{1}}},
			{"/api/admin/groups", map[string]any{"title": "Neu"}},
		} {
			r := admin.Do("POST", c.path, c.body)
			if r.Status != 409 || r.ErrorCode() != "managed_elsewhere" {
				t.Errorf("%s: POST %s = %d %s, want 409 managed_elsewhere", s.name, c.path, r.Status, r.Body)
			}
		}
	})
}

// nonEmptyFields drops the empty values (and colPos and ogImage 0) from
// every "fields" object of a JSON text: TYPO3 has every column of a row,
// the built-in source the fields its import set — the same record either
// way. The slug is dropped too: TYPO3's demo pages have one (TYPO3 needs
// it), the fixture's do not.
func nonEmptyFields(t *testing.T, text string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return text
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if f, ok := x["fields"].(map[string]any); ok {
				for k, val := range f {
					if val == "" || ((k == "colPos" || k == "ogImage") && val == "0") || k == "slug" {
						delete(f, k)
					}
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A queued run is checked at pickup as the user is then: erika, taken out
// of her groups between enqueue and pickup (in TYPO3 on a TYPO3 site), is
// refused — the configuration is for groups she is no longer in.
func TestARightsChangeBetweenEnqueueAndPickupRefusesTheRun(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		s.importText(t, tourSite)
		erika := s.env.As("demo-token-erika")
		st, r := erika.StartRun(waymarktest.StartRun{Configuration: 9, Messages: []waymarktest.Message{{Role: "user", Content: "SEO please"}},
			Invocation: &waymarktest.Invocation{Skill: 19, Subject: &waymarktest.Subject{Table: "pages", UID: 2}}, Queued: true})
		if r.Status != 201 {
			t.Fatalf("%s: POST /api/runs = %d %s", s.name, r.Status, r.Body)
		}
		if s.t3 != nil {
			s.t3exec(t, "UPDATE `be_users` SET `usergroup` = '' WHERE `username` = 'erika'")
		} else if _, err := s.env.DB.Exec(context.Background(), "UPDATE be_users SET group_uids = '[]' WHERE uid = 2"); err != nil {
			t.Fatal(err)
		}
		if err := s.env.App.Runtime.RunQueued(context.Background(), st.UUID); err != nil {
			t.Fatal(err)
		}
		got := s.env.As("demo-token-admin").MustRun(st.UUID)
		if got.Status != "failed" || got.Refusal != "configuration_denied" {
			t.Errorf("%s: run after the change = %s refusal %q, want failed configuration_denied", s.name, got.Status, got.Refusal)
		}
	})
}

// A TYPO3 user whose password hash is of a kind Waymark cannot verify
// (phpass, from before TYPO3 9) is refused like a wrong password, and the
// server's log says why at the default level, naming the kind, never the hash.
func TestARefusedLoginOfAHashKindWaymarkCannotVerifyIsNamedInTheLog(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		var log bytes.Buffer
		sites := t.TempDir()
		if err := typo3.WriteDemoSites(sites); err != nil {
			t.Fatal(err)
		}
		inst, err := live.New(context.Background(), t3.DB, t3.Dialect, sites, nil)
		if err != nil {
			t.Fatal(err)
		}
		env := waymarktest.New(t, storetest.SQLite(t), "", &waymarktest.Options{TYPO3: inst,
			Logger: slog.New(slog.NewJSONHandler(&syncWriter{w: &log}, nil))})
		const phpass = "$P$BXqO2yLr1PFhRJ8e2XqO8Vb5rC2nJ/0"
		q := "UPDATE `be_users` SET `password` = ? WHERE `username` = 'max'"
		if t3.Dialect == typo3.Postgres {
			q = pgBind(q)
		}
		if _, err := t3.Exec(q, phpass); err != nil {
			t.Fatal(err)
		}
		if r := env.As("").Do("POST", "/api/login", map[string]string{"username": "max", "password": "max-demo-pass"}); r.Status != 401 {
			t.Fatalf("login with a phpass hash = %d %s, want 401", r.Status, r.Body)
		}
		got := log.String()
		if !strings.Contains(got, `"level":"WARN"`) || !strings.Contains(got, "login refused") || !strings.Contains(got, "phpass") {
			t.Errorf("the log does not name the hash kind of the refused login at the default level:\n%s", got)
		}
		if strings.Contains(got, phpass) {
			t.Error("the log shows the hash")
		}
	})
}

// syncWriter serialises writes of the server's goroutines to one buffer.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// A password changed in TYPO3 ends the user's Waymark sessions and API
// tokens at their next request, as TYPO3 ends her backend sessions; a login
// with the new password opens a new one. Tokens and sessions of other users
// stay.
func TestAPasswordChangedInTYPO3EndsTheUsersSessionsAndTokens(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		ctx := context.Background()
		env := besideTYPO3(t, t3.DB, t3.Dialect, "")
		login := func(user, password string) (*http.Cookie, int) {
			r := env.As("").Do("POST", "/api/login", map[string]string{"username": user, "password": password})
			for _, c := range (&http.Response{Header: r.Header}).Cookies() {
				if c.Name == "waymark_session" {
					return c, r.Status
				}
			}
			return nil, r.Status
		}
		me := func(c *http.Cookie, token string) int {
			req, _ := http.NewRequest("GET", env.URL+"/api/me", nil)
			if c != nil {
				req.AddCookie(c)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		erika, status := login("erika", "erika-demo-pass")
		paula, _ := login("paula", "paula-demo-pass")
		if erika == nil || paula == nil {
			t.Fatalf("logins = %d", status)
		}
		var erikaUID, paulaUID int64
		_ = env.DB.QueryRow(ctx, "SELECT uid FROM be_users WHERE username = 'erika'").Scan(&erikaUID)
		_ = env.DB.QueryRow(ctx, "SELECT uid FROM be_users WHERE username = 'paula'").Scan(&paulaUID)
		erikaToken, err := access.IssueToken(ctx, env.App.Directory, env.DB, erikaUID, "script", time.Now(), 4)
		if err != nil {
			t.Fatal(err)
		}
		paulaToken, err := access.IssueToken(ctx, env.App.Directory, env.DB, paulaUID, "script", time.Now(), 4)
		if err != nil {
			t.Fatal(err)
		}
		if me(erika, "") != 200 || me(nil, erikaToken) != 200 {
			t.Fatal("erika's session and token do not work before the change")
		}
		hash, err := typo3.HashArgon2iPassword("erika-new-pass", typo3.Argon2Params{Memory: 1024, Time: 1, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		q := "UPDATE `be_users` SET `password` = ? WHERE `username` = 'erika'"
		if t3.Dialect == typo3.Postgres {
			q = pgBind(q)
		}
		if _, err := t3.Exec(q, hash); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2100 * time.Millisecond) // a user read is believed 2 s (access.WithActorMemo)
		if got := me(erika, ""); got != 401 {
			t.Errorf("erika's session after her password changed in TYPO3 = %d, want 401", got)
		}
		if got := me(nil, erikaToken); got != 401 {
			t.Errorf("erika's token after her password changed in TYPO3 = %d, want 401", got)
		}
		if me(paula, "") != 200 || me(nil, paulaToken) != 200 {
			t.Error("paula's session or token ended with erika's password")
		}
		again, status := login("erika", "erika-new-pass")
		if again == nil || me(again, "") != 200 {
			t.Errorf("a login with the new password = %d", status)
		}
		if got := me(erika, ""); got != 401 {
			t.Errorf("the old session came back after the new login: %d", got)
		}
	})
}
