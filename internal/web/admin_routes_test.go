package web

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"waymark/internal/access"
)

// adminRoutesFile is the list of every /admin… route the UI mounts (issue
// 14), shared with the browser suite (e2e/tests/admin.test.js) and the
// 403 test of this package: both walk it, so a new admin screen is covered
// by both once the list is regenerated (WAYMARK_UPDATE_ADMIN_ROUTES=1).
const adminRoutesFile = "../../e2e/admin-routes.json"

type adminRoute struct {
	Method string `json:"method"`
	Path   string `json:"path"`
}

// mountedAdminRoutes registers the administration screens on a recorder.
func mountedAdminRoutes() []adminRoute {
	var out []adminRoute
	rec := func(pattern string, _ func(http.ResponseWriter, *http.Request)) {
		method, path, _ := strings.Cut(pattern, " ")
		if strings.HasPrefix(path, "/admin") {
			out = append(out, adminRoute{Method: method, Path: path})
		}
	}
	u := &UI{}
	u.registerAdminSkills(rec)
	u.registerAdmin(rec)
	slices.SortFunc(out, func(a, b adminRoute) int { return strings.Compare(a.Method+" "+a.Path, b.Method+" "+b.Path) })
	return out
}

func TestTheSharedAdminRouteListIsEveryMountedAdminRoute(t *testing.T) {
	want := mountedAdminRoutes()
	if len(want) == 0 {
		t.Fatal("no /admin route is mounted")
	}
	data, _ := json.MarshalIndent(want, "", "  ")
	data = append(data, '\n')
	if os.Getenv("WAYMARK_UPDATE_ADMIN_ROUTES") != "" {
		if err := os.WriteFile(adminRoutesFile, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(adminRoutesFile)
	if err != nil || string(got) != string(data) {
		t.Errorf("%s is not the list of mounted /admin routes (err %v); regenerate it with\n"+
			"  WAYMARK_UPDATE_ADMIN_ROUTES=1 go test ./internal/web/ -run TestTheSharedAdminRouteList\nwant:\n%s", adminRoutesFile, err, data)
	}
}

// The keys the administration templates build from a value (print
// "admin.field." …) exist in the catalogue.
func TestEveryBuiltAdminKeyIsInTheCatalogue(t *testing.T) {
	var keys []string
	for _, f := range []string{"name", "identifier", "active", "requireSecondApprover", "providerType", "baseUrl", "model",
		"contextWindow", "maxOutputTokens", "toolGroups", "maxIterations", "tokenBudget", "username", "password", "admin",
		"serviceAccount", "mounts", "title", "tablesSelect", "tablesModify", "nonExcludeFields"} {
		keys = append(keys, "admin.field."+f)
	}
	d := &configData{}
	for _, p := range d.Providers() {
		keys = append(keys, "admin.provider."+string(p))
	}
	for _, p := range d.Privacies() {
		keys = append(keys, "admin.privacy."+string(p))
	}
	for _, s := range runStatuses {
		keys = append(keys, "admin.runStatus."+string(s))
	}
	for _, g := range []string{access.GrantApprove, access.GrantSkillApprove} {
		keys = append(keys, "admin.grant."+g)
	}
	for _, k := range []string{"retryable", "not_retryable", "bad_response", "setup", "timeout"} {
		keys = append(keys, "admin.probe.kind."+k)
	}
	for _, l := range (&userData{}).BackendLanguages() {
		keys = append(keys, "admin.lang."+l)
	}
	for _, k := range keys {
		if !hasKey(k) {
			t.Errorf("the administration screens look up %q, which the catalogue lacks", k)
		}
	}
}
