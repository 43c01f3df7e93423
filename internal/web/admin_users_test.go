package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"waymark/internal/access"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

func mustAccount(t *testing.T, e *wt.Env, uid int64) access.Account {
	t.Helper()
	a, err := access.GetAccount(context.Background(), e.App.Directory, e.DB, uid)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// apiStatus is the status of GET /api/me with a bearer token.
func apiStatus(t *testing.T, e *wt.Env, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.URL+"/api/me", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Screen 4: disabling a user ends their open session at once (their next
// page and their next action go to the login) and refuses their token;
// enabling them makes the token work again, the ended session stays ended.
func TestDisabledUsersSessionAndTokensStopAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		erika := login(t, e, "erika", "erika-pass-1234")
		admin := loginAdmin(t, e)
		contains(t, "user page", admin.get("/admin/users/2"), "<h1>User erika</h1>", "This user is active.", ">Disable user</button>")
		a := admin.post("/admin/users/2/active", url.Values{"active": {"0"}})
		if to := a.Header.Get("HX-Redirect"); to != "/admin/users/2?done=disabled" {
			t.Fatalf("disable = %d, HX-Redirect %q: %s", a.Status, to, a.Body)
		}
		contains(t, "after disabling", admin.get("/admin/users/2?done=disabled"), "Disabled. The user&#39;s sessions have ended", ">Enable user</button>")
		contains(t, "user list", admin.get("/admin/users"), "<strong>disabled</strong>")
		if a := erika.get("/chat"); a.Status != http.StatusSeeOther || a.Header.Get("Location") != "/login" {
			t.Errorf("disabled erika GET /chat = %d to %q, want the login", a.Status, a.Header.Get("Location"))
		}
		// An action is refused as one whose session ended (the page says so and
		// links to the login), not done.
		if a := erika.post("/chat", url.Values{"page": {"1"}, "language": {"0"}}); a.Status != http.StatusUnauthorized || a.Header.Get("X-Waymark-Session-Ended") == "" {
			t.Errorf("disabled erika's action = %d (session ended %q), want 401", a.Status, a.Header.Get("X-Waymark-Session-Ended"))
		}
		if s := apiStatus(t, e, wt.Erika); s == http.StatusOK {
			t.Errorf("disabled erika's token = %d, want refused", s)
		}
		if mustAccount(t, e, 2).Active {
			t.Error("erika is still active")
		}
		admin.post("/admin/users/2/active", url.Values{"active": {"1"}})
		if s := apiStatus(t, e, wt.Erika); s != http.StatusOK {
			t.Errorf("enabled erika's token = %d, want 200", s)
		}
		if a := erika.get("/chat"); a.Status != http.StatusSeeOther {
			t.Errorf("erika's ended session after enabling = %d, want it still ended", a.Status)
		}
	})
}

var shownToken = regexp.MustCompile(`id="new-token" readonly value="([^"]+)"`)

// Screen 4: a user's new API token is shown once, works, and is never
// shown again.
func TestUsersNewTokenIsShownOnceAndWorks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		a := admin.post("/admin/users/4/tokens", url.Values{"label": {"deploy script"}})
		m := shownToken.FindStringSubmatch(a.Body)
		if m == nil {
			t.Fatalf("no token shown: %d %s", a.Status, a.Body)
		}
		contains(t, "new token", a, "Copy this token now: it is shown only this once.", "deploy script")
		if s := apiStatus(t, e, m[1]); s != http.StatusOK {
			t.Errorf("the new token = %d, want 200", s)
		}
		page := admin.get("/admin/users/4")
		contains(t, "user page", page, "deploy script")
		lacks(t, "user page", page, m[1])
		long := admin.post("/admin/users/4/tokens", url.Values{"label": {strings.Repeat("x", 201)}})
		contains(t, "long label", long, `id="e-label"`, "at most 200 bytes")
		if n := mustAccount(t, e, 4).Tokens; n != 2 {
			t.Errorf("otto has %d tokens, want his own and the new one", n)
		}
	})
}

func userForm(change map[string]string) url.Values {
	f := url.Values{"username": {"otto"}, "backendLanguage": {"en"}, "groups": {"1"}, "grants": {"skill_approve"}}
	for k, v := range change {
		f.Set(k, v)
	}
	return f
}

// Screen 4: bad input shows a clear error at the field and changes nothing;
// the last active administrator cannot be disabled.
func TestUserBadInputShowsTheErrorAtTheFieldAndChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		before := mustAccount(t, e, 4)
		for _, tc := range []struct{ field, value, message string }{
			{"username", "erika", "This name is already taken."},
			{"password", "short", "The password needs 8 to 72 bytes."},
			{"groups", "99", "Choose existing groups only. (no group 99)"},
			{"mounts", "home", "Enter a whole number (not “home”)."},
			{"mounts", "4711", "Enter uids of existing pages. (no page 4711)"},
		} {
			a := admin.post("/admin/users/4", userForm(map[string]string{tc.field: tc.value}))
			if a.Header.Get("HX-Redirect") != "" {
				t.Fatalf("%s=%s was saved", tc.field, tc.value)
			}
			contains(t, tc.field+"="+tc.value, a, "Nothing was saved.", tc.message)
			after := mustAccount(t, e, 4)
			if after.Username != before.Username || len(after.Groups) != len(before.Groups) || len(after.Mounts) != len(before.Mounts) {
				t.Errorf("a refused save changed otto: %+v → %+v", before, after)
			}
		}
		if _, err := e.App.Server.Auth().Login(context.Background(), "otto", "otto-pass-1234"); err != nil {
			t.Errorf("otto's password after the refused saves: %v", err)
		}
		a := admin.post("/admin/users/1/active", url.Values{"active": {"0"}})
		contains(t, "disable the last admin", a, `role="alert"`, "no active administrator would remain")
		if !mustAccount(t, e, 1).Active {
			t.Error("the last administrator was disabled")
		}
	})
}

// Screen 4: a user created in the browser can log in with the rights
// chosen; a group's tables are checked; a new group takes a subgroup.
func TestAdministratorCreatesAUserAndAGroup(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		a := admin.post("/admin/users", url.Values{"username": {"hanna"}, "password": {"hanna-pass-1234"}, "backendLanguage": {"de"},
			"groups": {"1"}, "grants": {"approve"}, "languages": {"1"}, "mounts": {"1, 2"}})
		if to := a.Header.Get("HX-Redirect"); to != "/admin/users/6?done=saved" {
			t.Fatalf("create = %d, HX-Redirect %q: %s", a.Status, to, a.Body)
		}
		acc := mustAccount(t, e, 6)
		if !acc.Active || acc.BackendLanguage != "de" || len(acc.Grants) != 1 || len(acc.Mounts) != 2 || !acc.HasPassword {
			t.Errorf("created = %+v", acc)
		}
		hanna := login(t, e, "hanna", "hanna-pass-1234")
		contains(t, "hanna's navigation", hanna.get("/chat"), `href="/inbox"`)

		group := url.Values{"title": {"Editors"}, "tablesSelect": {"pages, tt_content"}, "tablesModify": {"pages, nosuchtable"},
			"nonExcludeFields": {"pages:description"}, "languages": {"0", "1"}, "mounts": {"1"}}
		a = admin.post("/admin/groups/1", group)
		contains(t, "unknown table", a, `id="e-tablesModify"`, "nosuchtable")
		g, err := access.GetGroup(context.Background(), e.App.Directory, e.DB, 1)
		if err != nil || len(g.TablesModify) != 2 || g.TablesModify[1] != "tt_content" {
			t.Errorf("a refused save changed the group: %+v, %v", g, err)
		}
		a = admin.post("/admin/groups", url.Values{"title": {"Seniors"}, "subgroups": {"1"}, "grants": {"approve"}})
		if to := a.Header.Get("HX-Redirect"); to != "/admin/groups/2?saved=1" {
			t.Fatalf("create group = %d, HX-Redirect %q: %s", a.Status, to, a.Body)
		}
		contains(t, "group list", admin.get("/admin/groups"), `<a href="/admin/groups/2">Seniors</a>`, "<td>Editors</td>")
		contains(t, "group page", admin.get("/admin/groups/2"), `<h1>Group Seniors</h1>`, `name="subgroups" value="1" checked`)
	})
}

var revokeButton = regexp.MustCompile(`hx-post="(/admin/users/4/tokens/(\d+)/revoke)"[^>]*\s+hx-confirm="Revoke the token “deploy script”\?`)

// Screen 4: one API token of a user is revoked in the browser, after a
// confirmation: it is refused from the next request on, the user's other
// tokens keep working, and a token not the user's changes nothing.
func TestUsersTokenIsRevokedInTheBrowser(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		m := shownToken.FindStringSubmatch(admin.post("/admin/users/4/tokens", url.Values{"label": {"deploy script"}}).Body)
		if m == nil {
			t.Fatal("no token shown")
		}
		page := admin.get("/admin/users/4")
		b := revokeButton.FindStringSubmatch(page.Body)
		if b == nil {
			t.Fatalf("no revoke button with a confirmation for the token: %s", page.Body)
		}
		contains(t, "user page", page, `aria-label="Revoke token deploy script"`)
		if a := admin.post("/admin/users/3/tokens/"+b[2]+"/revoke", nil); !strings.Contains(a.Body, "Not found.") {
			t.Errorf("revoking otto's token as another user's = %d %s", a.Status, a.Body)
		}
		if s := apiStatus(t, e, m[1]); s != http.StatusOK {
			t.Fatalf("the token after a refused revoke = %d, want 200", s)
		}
		a := admin.post(b[1], nil)
		contains(t, "revoked", a, "Revoked: the token is refused from now on.")
		lacks(t, "revoked", a, "deploy script")
		if s := apiStatus(t, e, m[1]); s != http.StatusUnauthorized {
			t.Errorf("the revoked token = %d, want 401", s)
		}
		if n := mustAccount(t, e, 4).Tokens; n != 1 {
			t.Errorf("otto has %d tokens, want his own one left", n)
		}
		contains(t, "again", admin.post(b[1], nil), "Not found.")
	})
}

var ownRevoke = regexp.MustCompile(`hx-post="(/settings/tokens/(\d+)/revoke)"[^>]*\s+hx-confirm="Revoke the token “deploy script”\?`)

// Settings: a user sees her own API tokens and revokes one, after a
// confirmation; it is refused from then on. A token id not hers changes
// nothing.
func TestOwnTokenIsRevokedInTheSettings(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		m := shownToken.FindStringSubmatch(admin.post("/admin/users/4/tokens", url.Values{"label": {"deploy script"}}).Body)
		if m == nil {
			t.Fatal("no token shown")
		}
		otto := login(t, e, "otto", "otto-pass-1234")
		page := otto.get("/settings")
		b := ownRevoke.FindStringSubmatch(page.Body)
		if b == nil {
			t.Fatalf("otto's settings show no revocable token: %s", page.Body)
		}
		contains(t, "settings", page, "Your API tokens", `aria-label="Revoke token deploy script"`)
		if a := otto.post("/settings/tokens/999999/revoke", nil); !strings.Contains(a.Body, "Not found.") {
			t.Errorf("revoking a token not his = %d %s", a.Status, a.Body)
		}
		a := otto.post(b[1], nil)
		contains(t, "revoked", a, "Revoked: the token is refused from now on.")
		lacks(t, "revoked", a, "deploy script")
		if s := apiStatus(t, e, m[1]); s != http.StatusUnauthorized {
			t.Errorf("the revoked token = %d, want 401", s)
		}
		if n := mustAccount(t, e, 4).Tokens; n != 1 {
			t.Errorf("otto has %d tokens, want one left", n)
		}
	})
}
