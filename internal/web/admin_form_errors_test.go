package web_test

import (
	"net/url"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// A user form with several wrong fields shows every error in one answer
// (not one field per round) and stores nothing.
func TestTheUserFormShowsEveryErrorAtOnceAndStoresNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		before := admin.get("/admin/users").Body
		cases := []struct {
			name string
			form url.Values
			want []string // the field errors, all in the one answer
		}{
			{"store checks only", url.Values{"username": {" "}, "password": {"short"}, "backendLanguage": {"fr"}, "groups": {"999"}},
				[]string{`id="e-username"`, `id="e-password"`, "want en or de", "Choose existing groups only."}},
			{"a value that does not parse and the store's checks", url.Values{"username": {""}, "password": {"short"}, "mounts": {"abc"}},
				[]string{`id="e-username"`, `id="e-password"`, "Enter a whole number (not “abc”)."}},
			{"a taken name with a short password", url.Values{"username": {"erika"}, "password": {"short"}},
				[]string{`id="e-username"`, `id="e-password"`}},
		}
		for _, c := range cases {
			a := admin.post("/admin/users", c.form)
			if a.Header.Get("HX-Redirect") != "" {
				t.Fatalf("%s: saved (redirect %q)", c.name, a.Header.Get("HX-Redirect"))
			}
			contains(t, c.name, a, append([]string{"Nothing was saved. Please correct the fields marked below."}, c.want...)...)
			if c.name == "a taken name with a short password" && !strings.Contains(a.Body, "already") && !strings.Contains(a.Body, "taken") {
				t.Errorf("%s: the taken name is not marked: %s", c.name, a.Body)
			}
		}
		if after := admin.get("/admin/users").Body; after != before {
			t.Errorf("the user list changed after refused forms")
		}
	})
}

// The group form, too, lists every wrong field in one answer.
func TestTheGroupFormShowsEveryErrorAtOnceAndStoresNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		before := admin.get("/admin/groups").Body
		a := admin.post("/admin/groups", url.Values{"title": {""}, "tablesSelect": {"no_such_table"}, "languages": {"99"}})
		if a.Header.Get("HX-Redirect") != "" {
			t.Fatalf("saved (redirect %q)", a.Header.Get("HX-Redirect"))
		}
		contains(t, "group form", a, "Nothing was saved. Please correct the fields marked below.",
			`id="e-title"`, `id="e-tablesSelect"`, "no language 99")
		if after := admin.get("/admin/groups").Body; after != before {
			t.Errorf("the group list changed after a refused form")
		}
	})
}

// The configuration form, too, lists every wrong field in one answer — a
// value that does not parse beside the store's checks — and stores nothing.
func TestTheConfigurationFormShowsEveryErrorAtOnceAndStoresNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		before := admin.get("/admin/configurations").Body
		base := url.Values{"identifier": {"Not a slug!"}, "name": {"x"}, "providerType": {"openai"}, "model": {""},
			"contextWindow": {"8000"}, "maxOutputTokens": {"9000"}, "privacy": {"metadata"}, "maxIterations": {"500"},
			"allowedGroups": {"999"}}
		want := []string{"Nothing was saved. Please correct the fields marked below.", `id="e-identifier"`, `id="e-model"`,
			`id="e-maxOutputTokens"`, `id="e-maxIterations"`, `id="e-allowedGroups"`}
		contains(t, "store checks only", admin.post("/admin/configurations", base), want...)

		unparsed := url.Values{}
		for k, v := range base {
			unparsed[k] = v
		}
		unparsed.Set("tokenBudget", "abc")
		contains(t, "a value that does not parse and the store's checks", admin.post("/admin/configurations", unparsed),
			append(want, `id="e-tokenBudget"`, "Enter a whole number (not “abc”).")...)
		if after := admin.get("/admin/configurations").Body; after != before {
			t.Errorf("the configuration list changed after refused forms")
		}
	})
}

// An administration form with text the database cannot store is refused
// 400 before its handler runs, and nothing is stored.
func TestAnAdminFormWithTextTheDatabaseCannotStoreIsRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		before := admin.get("/admin/groups").Body
		if r := admin.post("/admin/groups", url.Values{"title": {"Redaktion\x00"}}); r.Status != 400 || !strings.Contains(r.Body, "cannot be stored") {
			t.Errorf("a group form with a NUL byte = %d %s, want 400 with the sentence", r.Status, r.Body)
		}
		if after := admin.get("/admin/groups").Body; after != before {
			t.Errorf("the group list changed after a refused form")
		}
	})
}
