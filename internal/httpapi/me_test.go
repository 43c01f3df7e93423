package httpapi_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"waymark/internal/httpapi"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestMeWithTokenShowsEffectivePermissions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		a := b.do(t, call{method: "GET", path: "/api/me", token: erikaToken})
		if a.status != http.StatusOK {
			t.Fatalf("GET /api/me = %d %s", a.status, a.body)
		}
		got := decode[httpapi.Me](t, a)
		want := httpapi.Me{UID: 7, Username: "erika", Groups: []int64{1, 2}, Languages: []int64{0, 1},
			Mounts: []int64{1, 5}, Grants: []string{"approve", "skill_approve"}, BackendLanguage: "de"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("GET /api/me = %+v, want %+v", got, want)
		}
	})
}

func TestMeOfUnrestrictedUsersSaysAllLanguagesWithEmptyLists(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		for _, c := range []struct {
			token string
			want  string
		}{
			{adminToken, `"uid":1,"username":"admin","admin":true,"serviceAccount":false,"groups":[],"languages":[],"allLanguages":true,"mounts":[],"grants":[]`},
			{robotToken, `"uid":8,"username":"robot","admin":false,"serviceAccount":true,"groups":[],"languages":[],"allLanguages":true`},
		} {
			a := b.do(t, call{method: "GET", path: "/api/me", token: c.token})
			if a.status != http.StatusOK || !strings.Contains(string(a.body), c.want) {
				t.Errorf("GET /api/me as %s = %d %s, want it to contain %s", c.token, a.status, a.body, c.want)
			}
		}
	})
}

func TestMeRefusesMissingAndWrongCredentialsWith401(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		cases := []struct {
			name string
			c    call
		}{
			{"no credentials", call{method: "GET", path: "/api/me"}},
			{"wrong token", call{method: "GET", path: "/api/me", token: "wm_wrong_token_0001"}},
			{"unknown session", call{method: "GET", path: "/api/me", cookie: &http.Cookie{Name: httpapi.SessionCookie, Value: "nope"}}},
		}
		for _, c := range cases {
			a := b.do(t, c.c)
			wantError(t, c.name, a, http.StatusUnauthorized, "unauthenticated")
			if a.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: no WWW-Authenticate header", c.name)
			}
		}
		a := b.do(t, call{method: "GET", path: "/api/me", headers: map[string]string{"Authorization": "Basic " + erikaToken}})
		wantError(t, "basic scheme", a, http.StatusUnauthorized, "unauthenticated")
	})
}

func TestDisabledUserIsRefusedAtOnceDespiteCachedToken(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		if a := b.do(t, call{method: "GET", path: "/api/me", token: erikaToken}); a.status != http.StatusOK {
			t.Fatalf("first GET /api/me = %d %s", a.status, a.body)
		}
		if _, err := db.Exec(context.Background(), "UPDATE be_users SET disabled = TRUE WHERE uid = 7"); err != nil {
			t.Fatal(err)
		}
		a := b.do(t, call{method: "GET", path: "/api/me", token: erikaToken})
		wantError(t, "GET /api/me after disabling", a, http.StatusUnauthorized, "unauthenticated")
	})
}

func TestDisabledUsersTokenIsRefused(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		a := b.do(t, call{method: "GET", path: "/api/me", token: maxToken})
		wantError(t, "GET /api/me as disabled max", a, http.StatusUnauthorized, "unauthenticated")
	})
}

func TestPermissionChangesShowOnTheNextRequest(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		b.do(t, call{method: "GET", path: "/api/me", token: erikaToken})
		if _, err := db.Exec(context.Background(), `UPDATE be_users SET group_uids = '[2]' WHERE uid = 7`); err != nil {
			t.Fatal(err)
		}
		got := decode[httpapi.Me](t, b.do(t, call{method: "GET", path: "/api/me", token: erikaToken}))
		if !reflect.DeepEqual(got.Groups, []int64{2}) || !got.AllLanguages {
			t.Errorf("after regrouping: groups %v allLanguages %v, want [2] true", got.Groups, got.AllLanguages)
		}
	})
}
