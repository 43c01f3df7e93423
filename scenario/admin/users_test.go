package admin_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// login opens a session of username and returns its cookie header ("" when refused).
func login(t *testing.T, e *wt.Env, username, password string) string {
	t.Helper()
	body := `{"username": "` + username + `", "password": "` + password + `"}`
	resp, err := http.Post(e.URL+"/api/login", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	for _, c := range resp.Cookies() {
		if c.Name == "waymark_session" {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatalf("login of %s set no session cookie", username)
	return ""
}

// meWithCookie answers the status of GET /api/me with a session cookie.
func meWithCookie(t *testing.T, e *wt.Env, cookie string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", e.URL+"/api/me", nil)
	req.Header.Set("Cookie", cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func newUser() map[string]any {
	return map[string]any{"username": "hans", "password": "geheim-123", "groups": []int{1}, "grants": []string{"approve"},
		"backendLanguage": "de", "languages": []int{0}, "mounts": []int{1}}
}

func TestAdministratorCreatesAUserWhoCanLogIn(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		r := admin.Must("POST", "/api/admin/users", newUser(), http.StatusCreated)
		u := wt.Decode[wt.Account](t, r)
		if u.UID <= 5 || u.Username != "hans" || !u.Active || u.Admin || !u.HasPassword || u.BackendLanguage != "de" {
			t.Fatalf("created = %+v, want active hans with a password", u)
		}
		if strings.Contains(string(r.Body), "geheim-123") || strings.Contains(string(r.Body), "$2a$") {
			t.Errorf("answer shows the password or its hash: %s", r.Body)
		}
		if login(t, e, "hans", "geheim-123") == "" {
			t.Fatalf("hans cannot log in with the password the administrator set")
		}
		path := "/api/admin/users/" + itoa(float64(u.UID))
		// PUT without a password keeps it; with one replaces it.
		upd := newUser()
		delete(upd, "password")
		upd["grants"], upd["admin"] = []string{}, true
		got := wt.Decode[wt.Account](t, admin.Must("PUT", path, upd, http.StatusOK))
		if !got.Admin || got.Grants == nil || len(got.Grants) != 0 || !got.HasPassword {
			t.Errorf("PUT = %+v, want admin without grants, password kept", got)
		}
		if login(t, e, "hans", "geheim-123") == "" {
			t.Errorf("a PUT without password removed the password")
		}
		// A GET answer sent back as it is changes nothing (sent back raw, every field it has).
		back := admin.Must("GET", path, nil, 200).Map(t)
		if again := wt.Decode[wt.Account](t, admin.Must("PUT", path, back, http.StatusOK)); !again.HasPassword || !again.Admin {
			t.Errorf("PUT of the GET answer = %+v, want it unchanged", again)
		}
		upd["password"] = "anders-456"
		admin.Must("PUT", path, upd, http.StatusOK)
		if login(t, e, "hans", "geheim-123") != "" || login(t, e, "hans", "anders-456") == "" {
			t.Errorf("after setting a new password the old one works or the new one does not")
		}
		list := admin.Must("GET", "/api/admin/users", nil, http.StatusOK)
		if n := len(wt.Decode[wt.Accounts](t, list).Users); n != 6 || strings.Contains(string(list.Body), "$2a$") {
			t.Errorf("list = %s, want 6 users without hashes", list.Body)
		}
	})
}

// The issue: "create a user's API token (shown once)".
func TestUserTokenIsShownOnceAndWorks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		tok := wt.Decode[wt.IssuedToken](t, admin.Must("POST", "/api/admin/users/4/tokens", map[string]any{"label": "ci"}, http.StatusCreated))
		token := tok.Token
		if !strings.HasPrefix(token, "wm_") || tok.Label != "ci" || tok.User != 4 {
			t.Fatalf("token answer = %+v, want a wm_ token for user 4 labelled ci", tok)
		}
		me := wt.Decode[wt.Me](t, e.As(token).Must("GET", "/api/me", nil, http.StatusOK))
		if me.Username != "otto" {
			t.Errorf("the new token acts as %v, want otto", me.Username)
		}
		for _, p := range []string{"/api/admin/users/4", "/api/admin/users"} {
			if b := admin.Must("GET", p, nil, 200).Body; strings.Contains(string(b), token) {
				t.Errorf("GET %s shows the token again", p)
			}
		}
		if got := wt.Decode[wt.Account](t, admin.Must("GET", "/api/admin/users/4", nil, 200)); got.Tokens != 2 {
			t.Errorf("user 4 tokens = %v, want 2", got.Tokens)
		}
		refused(t, admin.Do("POST", "/api/admin/users/4/tokens", map[string]any{"label": strings.Repeat("x", 201)}), 400, "label", "long label")
	})
}

// The issue: "disable a user (their sessions and tokens stop at once)".
func TestDisabledUserSessionsAndTokensStopAtOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		admin.Must("PUT", "/api/admin/users/4", map[string]any{"username": "otto", "password": "otto-pass-1", "groups": []int{1}}, http.StatusOK)
		cookie := login(t, e, "otto", "otto-pass-1")
		issued := wt.Decode[wt.IssuedToken](t, admin.Must("POST", "/api/admin/users/4/tokens", map[string]any{}, http.StatusCreated)).Token
		for _, tok := range []string{wt.Otto, issued} {
			e.As(tok).Must("GET", "/api/me", nil, http.StatusOK) // the token is verified and remembered
		}
		if meWithCookie(t, e, cookie) != http.StatusOK {
			t.Fatal("otto's session does not work before")
		}

		got := wt.Decode[wt.Account](t, admin.Must("PUT", "/api/admin/users/4", map[string]any{"username": "otto", "groups": []int{1}, "active": false}, http.StatusOK))
		if got.Active {
			t.Fatalf("PUT active false = %+v", got)
		}
		for _, tok := range []string{wt.Otto, issued} {
			if r := e.As(tok).Do("GET", "/api/me", nil); r.Status != http.StatusUnauthorized {
				t.Errorf("token of a disabled user: GET /api/me = %d, want 401", r.Status)
			}
		}
		if s := meWithCookie(t, e, cookie); s != http.StatusUnauthorized {
			t.Errorf("session of a disabled user: GET /api/me = %d, want 401", s)
		}
		if login(t, e, "otto", "otto-pass-1") != "" {
			t.Errorf("a disabled user can log in")
		}
		var sessions int
		if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM sessions WHERE user_uid = 4").Scan(&sessions); err != nil || sessions != 0 {
			t.Errorf("disabled user keeps %d sessions (%v), want 0", sessions, err)
		}

		// Enabled again, the tokens work; the ended session does not come back.
		admin.Must("PUT", "/api/admin/users/4", map[string]any{"username": "otto", "groups": []int{1}, "active": true}, http.StatusOK)
		e.As(issued).Must("GET", "/api/me", nil, http.StatusOK)
		if s := meWithCookie(t, e, cookie); s != http.StatusUnauthorized {
			t.Errorf("ended session after re-enabling: GET /api/me = %d, want 401", s)
		}
	})
}

func TestTheLastActiveAdministratorCannotBeDisabledOrDemoted(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		before := admin.Must("GET", "/api/admin/users/1", nil, 200).Map(t)
		refused(t, admin.Do("PUT", "/api/admin/users/1", map[string]any{"username": "admin", "admin": true, "active": false}), 409, "administrator", "disable last admin")
		refused(t, admin.Do("PUT", "/api/admin/users/1", map[string]any{"username": "admin", "admin": false}), 409, "administrator", "demote last admin")
		unchanged(t, admin, "/api/admin/users/1", before, "refused demotion")
		// With a second administrator the first may step down.
		admin.Must("PUT", "/api/admin/users/3", map[string]any{"username": "paula", "admin": true, "groups": []int{1}}, 200)
		admin.Must("PUT", "/api/admin/users/1", map[string]any{"username": "admin", "admin": false}, 200)
	})
}

func TestUserBadInputIsRefusedNamingTheFieldAndChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		before := admin.Must("GET", "/api/admin/users/4", nil, 200).Map(t)
		list := admin.Must("GET", "/api/admin/users", nil, 200).Map(t)
		for _, tc := range []struct {
			field  string
			value  any
			status int
		}{
			{"username", "  ", 400},
			{"username", "erika", 409},
			{"password", "short", 400},
			{"password", strings.Repeat("p", 73), 400},
			{"backendLanguage", "fr", 400},
			{"groups", []int{99}, 400},
			{"languages", []int{7}, 400},
			{"mounts", []int{999}, 400},
			{"grants", []string{"root"}, 400},
		} {
			body := newUser()
			body[tc.field] = tc.value
			refused(t, admin.Do("POST", "/api/admin/users", body), tc.status, tc.field, "POST with "+tc.field)
			if tc.field == "username" && tc.status == 409 {
				body["username"] = "erika" // otto renamed to erika
			}
			refused(t, admin.Do("PUT", "/api/admin/users/4", body), tc.status, tc.field, "PUT with "+tc.field)
		}
		taken := newUser()
		taken["uid"], taken["username"] = 4, "otto2"
		refused(t, admin.Do("POST", "/api/admin/users", taken), 409, "uid", "POST with an existing uid")
		taken["uid"] = 3
		refused(t, admin.Do("PUT", "/api/admin/users/4", taken), 400, "uid", "PUT naming another uid")
		admin.Must("PUT", "/api/admin/users/999", newUser(), http.StatusNotFound)
		admin.Must("GET", "/api/admin/users/999", nil, http.StatusNotFound)
		admin.Must("POST", "/api/admin/users/999/tokens", map[string]any{}, http.StatusNotFound)
		unchanged(t, admin, "/api/admin/users/4", before, "bad input")
		unchanged(t, admin, "/api/admin/users", list, "bad input")
	})
}

func TestAdministratorEditsGroupsAndMembersGetTheirRights(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		g := wt.Decode[wt.Group](t, admin.Must("POST", "/api/admin/groups", map[string]any{"title": "Reviewers", "grants": []string{"approve"},
			"subgroups": []int{1}, "tablesSelect": []string{"pages"}}, http.StatusCreated))
		uid := g.UID
		// tablesModify must read [] (a nil slice: null or absent, which the map read refused too).
		if uid <= 1 || g.Title != "Reviewers" || len(g.Subgroups) != 1 || g.TablesModify == nil || len(g.TablesModify) != 0 {
			t.Fatalf("created group = %+v", g)
		}
		// otto joins the new group and holds its grant at once.
		admin.Must("PUT", "/api/admin/users/4", map[string]any{"username": "otto", "groups": []int{int(uid)}}, http.StatusOK)
		me := wt.Decode[wt.Me](t, e.As(wt.Otto).Must("GET", "/api/me", nil, 200))
		if !strings.Contains(string(e.As(wt.Otto).Must("GET", "/api/me", nil, 200).Body), `"approve"`) {
			t.Errorf("me of a member of Reviewers = %+v, want the approve grant", me)
		}
		path := "/api/admin/groups/" + strconv.Itoa(int(uid))
		got := wt.Decode[wt.Group](t, admin.Must("PUT", path, map[string]any{"title": "Reviewers", "subgroups": []int{1}}, http.StatusOK))
		// grants must read [] (nil: null or absent, which the map read refused too).
		if got.Grants == nil || len(got.Grants) != 0 {
			t.Errorf("PUT = %+v, want no grants", got)
		}
		if strings.Contains(string(e.As(wt.Otto).Must("GET", "/api/me", nil, 200).Body), `"approve"`) {
			t.Errorf("otto keeps the approve grant after the group lost it")
		}
		if n := len(wt.Decode[wt.Groups](t, admin.Must("GET", "/api/admin/groups", nil, 200)).Groups); n != 2 {
			t.Errorf("groups listed = %d, want 2", n)
		}

		before := admin.Must("GET", "/api/admin/groups/1", nil, 200).Map(t)
		for _, tc := range []struct {
			field string
			value any
		}{
			{"title", ""},
			{"tablesSelect", []string{"be_users"}},
			{"tablesModify", []string{"nope"}},
			{"nonExcludeFields", []string{"pages:nofield"}},
			{"nonExcludeFields", []string{"pagesdescription"}},
			{"languages", []int{7}},
			{"mounts", []int{999}},
			{"subgroups", []int{99}},
			{"subgroups", []int{1}}, // itself
			{"grants", []string{"root"}},
		} {
			body := map[string]any{"title": "Editors", tc.field: tc.value}
			refused(t, admin.Do("PUT", "/api/admin/groups/1", body), 400, tc.field, "PUT group with "+tc.field)
			if tc.field != "subgroups" {
				refused(t, admin.Do("POST", "/api/admin/groups", body), 400, tc.field, "POST group with "+tc.field)
			}
		}
		refused(t, admin.Do("POST", "/api/admin/groups", map[string]any{"uid": 1, "title": "Again"}), 409, "uid", "POST group with an existing uid")
		admin.Must("PUT", "/api/admin/groups/999", map[string]any{"title": "x"}, http.StatusNotFound)
		admin.Must("GET", "/api/admin/groups/999", nil, http.StatusNotFound)
		unchanged(t, admin, "/api/admin/groups/1", before, "bad input")
	})
}

func TestAdministratorListsAndRevokesAUsersTokens(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		issued := wt.Decode[wt.IssuedToken](t, admin.Must("POST", "/api/admin/users/4/tokens", map[string]any{"label": "ci"}, http.StatusCreated)).Token
		e.As(issued).Must("GET", "/api/me", nil, http.StatusOK) // verified and remembered
		r := admin.Must("GET", "/api/admin/users/4/tokens", nil, http.StatusOK)
		if strings.Contains(string(r.Body), issued) || strings.Contains(string(r.Body), "$2a$") {
			t.Fatalf("token list shows a token or its hash: %s", r.Body)
		}
		var list struct {
			Tokens []struct {
				ID    int64  `json:"id"`
				Label string `json:"label"`
			} `json:"tokens"`
		}
		r.JSON(t, &list)
		if len(list.Tokens) != 2 || list.Tokens[1].Label != "ci" {
			t.Fatalf("tokens of otto = %+v, want the fixture's and ci", list.Tokens)
		}
		ci := strconv.FormatInt(list.Tokens[1].ID, 10)
		admin.Must("DELETE", "/api/admin/users/3/tokens/"+ci, nil, http.StatusNotFound) // not paula's
		admin.Must("DELETE", "/api/admin/users/4/tokens/999999", nil, http.StatusNotFound)
		e.As(issued).Must("GET", "/api/me", nil, http.StatusOK)
		admin.Must("DELETE", "/api/admin/users/4/tokens/"+ci, nil, http.StatusNoContent)
		if r := e.As(issued).Do("GET", "/api/me", nil); r.Status != http.StatusUnauthorized {
			t.Errorf("a revoked token: GET /api/me = %d, want 401 at once", r.Status)
		}
		e.As(wt.Otto).Must("GET", "/api/me", nil, http.StatusOK) // the other token still works
		admin.Must("DELETE", "/api/admin/users/4/tokens/"+ci, nil, http.StatusNotFound)
		admin.Must("GET", "/api/admin/users/999/tokens", nil, http.StatusNotFound)
	})
}

// Grants are a set: a user's or a group's grants naming one twice — through
// the grants routes, or the user and group bodies — are refused 400 naming
// grants, and nothing changes (they were stored twice and listed twice).
func TestGrantsNamedTwiceAreRefusedAndChangeNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		user := admin.Must("GET", "/api/admin/users/4", nil, 200).Map(t)
		group := admin.Must("GET", "/api/admin/groups/1", nil, 200).Map(t)
		twice := []string{"approve", "skill_approve", "approve"}
		refused(t, admin.Do("PUT", "/api/admin/users/4/grants", map[string]any{"grants": twice}), 400, "grants", "PUT user grants twice")
		refused(t, admin.Do("PUT", "/api/admin/groups/1/grants", map[string]any{"grants": twice}), 400, "grants", "PUT group grants twice")
		refused(t, admin.Do("PUT", "/api/admin/users/4", map[string]any{"username": "otto", "grants": twice}), 400, "grants", "PUT user with grants twice")
		refused(t, admin.Do("PUT", "/api/admin/groups/1", map[string]any{"title": "Editors", "grants": twice}), 400, "grants", "PUT group with grants twice")
		body := newUser()
		body["grants"] = twice
		refused(t, admin.Do("POST", "/api/admin/users", body), 400, "grants", "POST user with grants twice")
		refused(t, admin.Do("POST", "/api/admin/groups", map[string]any{"title": "Twice", "grants": twice}), 400, "grants", "POST group with grants twice")
		unchanged(t, admin, "/api/admin/users/4", user, "grants named twice")
		unchanged(t, admin, "/api/admin/groups/1", group, "grants named twice")
		// Each grant once is taken as it is.
		got := admin.Must("PUT", "/api/admin/users/4/grants", map[string]any{"grants": []string{"skill_approve", "approve"}}, 200).Map(t)
		if gs, _ := got["grants"].([]any); len(gs) != 2 {
			t.Errorf("grants after a PUT of each once = %v, want both", got["grants"])
		}
	})
}
