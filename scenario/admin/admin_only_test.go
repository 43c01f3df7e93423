package admin_test

import (
	"net/http"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// adminRoutes are the routes of the administration API with a body that
// would change something if it were accepted.
var adminRoutes = []struct {
	method, path string
	body         any
}{
	{"GET", "/api/admin/configurations", nil},
	{"POST", "/api/admin/configurations", map[string]any{"identifier": "x", "providerType": "demo", "contextWindow": 1000}},
	{"GET", "/api/admin/configurations/1", nil},
	{"GET", "/api/admin/configurations/999", nil},
	{"PUT", "/api/admin/configurations/1", map[string]any{"identifier": "chat", "providerType": "demo", "contextWindow": 1000}},
	{"PUT", "/api/admin/configurations/999", map[string]any{"identifier": "x", "providerType": "demo", "contextWindow": 1000}},
	{"POST", "/api/admin/configurations/1/test", nil},
	{"GET", "/api/admin/configurations/1/process-skills?user=2", nil},
	{"GET", "/api/admin/configurations/999/process-skills?user=2", nil},
	{"POST", "/api/admin/configurations/999/test", nil},
	{"GET", "/api/admin/users", nil},
	{"POST", "/api/admin/users", map[string]any{"username": "mallory", "admin": true}},
	{"GET", "/api/admin/users/1", nil},
	{"GET", "/api/admin/users/999", nil},
	{"PUT", "/api/admin/users/4", map[string]any{"username": "otto", "admin": true}},
	{"PUT", "/api/admin/users/999", map[string]any{"username": "otto", "admin": true}},
	{"POST", "/api/admin/users/1/tokens", map[string]any{"label": "stolen"}},
	{"POST", "/api/admin/users/999/tokens", map[string]any{"label": "stolen"}},
	{"GET", "/api/admin/users/1/tokens", nil},
	{"DELETE", "/api/admin/users/1/tokens/1", nil},
	{"DELETE", "/api/admin/users/999/tokens/1", nil},
	{"GET", "/api/admin/groups", nil},
	{"POST", "/api/admin/groups", map[string]any{"title": "Mine"}},
	{"GET", "/api/admin/groups/1", nil},
	{"GET", "/api/admin/groups/999", nil},
	{"PUT", "/api/admin/groups/1", map[string]any{"title": "Mine", "tablesModify": []string{"pages"}}},
	{"PUT", "/api/admin/groups/999", map[string]any{"title": "Mine"}},
	{"GET", "/api/admin/runs", nil},
	{"GET", "/api/admin/runs?status=bogus", nil},
}

// Every administration route answers 403 to an authenticated non-admin —
// known uid or not, valid body or not — before any lookup, 401 without
// credentials, and changes nothing.
func TestAdministrationRoutesRefuseNonAdminsBeforeAnyLookup(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		// Raw snapshots compared as whole maps (see unchanged): maps on purpose.
		before := map[string]map[string]any{}
		for _, p := range []string{"/api/admin/configurations", "/api/admin/users", "/api/admin/groups"} {
			before[p] = admin.Must("GET", p, nil, 200).Map(t)
		}
		for _, who := range []struct{ name, token string }{
			{"editor", wt.Erika}, {"approver", wt.Paula}, {"plain editor", wt.Otto}, {"service account", wt.Robot},
		} {
			c := e.As(who.token)
			for _, rt := range adminRoutes {
				r := c.Do(rt.method, rt.path, rt.body)
				if r.Status != http.StatusForbidden || r.ErrorCode() != "forbidden" {
					t.Errorf("%s: %s %s = %d %s, want 403 forbidden", who.name, rt.method, rt.path, r.Status, r.Body)
				}
			}
		}
		for _, rt := range adminRoutes {
			if r := e.As("").Do(rt.method, rt.path, rt.body); r.Status != http.StatusUnauthorized {
				t.Errorf("anonymous: %s %s = %d, want 401", rt.method, rt.path, r.Status)
			}
		}
		if len(e.LLM.Requests()) != 0 {
			t.Errorf("a refused test call reached the provider")
		}
		for p, b := range before {
			unchanged(t, admin, p, b, "refused calls")
		}
	})
}
