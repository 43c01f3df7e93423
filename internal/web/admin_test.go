package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"waymark/internal/llm/llmtest"
	"waymark/internal/llmconfig"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// adminSite is site with passwords for the administrator and otto, who
// holds the skill_approve grant (he may open the administration home for
// the skills, and nothing else of it).
var adminSite = strings.NewReplacer(
	"username: admin,", "username: admin, password: admin-pass-1234,",
	"username: otto,", "username: otto, password: otto-pass-1234, grants: [skill_approve],",
).Replace(site)

func newAdminEnv(t *testing.T, db *store.DB) *wt.Env {
	t.Helper()
	return wt.New(t, db, adminSite, nil)
}

func loginAdmin(t *testing.T, e *wt.Env) *browser { return login(t, e, "admin", "admin-pass-1234") }

// configForm is configuration 1 of the site as its form posts it.
func configForm(change map[string]string) url.Values {
	f := url.Values{"name": {"Chat"}, "identifier": {"chat"}, "active": {"1"}, "providerType": {"openai"},
		"baseUrl": {"{{LLM}}"}, "model": {"m"}, "contextWindow": {"32000"}, "maxOutputTokens": {"1000"},
		"privacy": {"metadata"}, "allowedGroups": {"1"}, "maxIterations": {"20"}, "tokenBudget": {"0"}, "script": {"[]"}}
	for k, v := range change {
		f.Set(k, v)
	}
	return f
}

func withLLM(e *wt.Env, f url.Values) url.Values {
	f.Set("baseUrl", strings.ReplaceAll(f.Get("baseUrl"), "{{LLM}}", e.LLM.URL()))
	return f
}

// Screen 3: a provider key entered once is stored (the connection test
// sends it) but never shown again — not after saving, not on the list, not
// as a value of the form; saving without a key keeps it.
func TestProviderKeyEnteredOnceIsNeverShownAgain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		ctx := context.Background()
		admin := loginAdmin(t, e)
		page := admin.get("/admin/configurations/1")
		contains(t, "configuration page", page, `<h1>Configuration Chat</h1>`, "A key is stored.", `name="apiKey" type="password"`)
		lacks(t, "configuration page", page, "sk-scenario-secret")
		const key = "sk-web-entered-once-4711"
		a := admin.post("/admin/configurations/1", withLLM(e, configForm(map[string]string{"apiKey": key})))
		if to := a.Header.Get("HX-Redirect"); to != "/admin/configurations/1?saved=1" {
			t.Fatalf("save = %d, HX-Redirect %q: %s", a.Status, to, a.Body)
		}
		for _, path := range []string{"/admin/configurations/1?saved=1", "/admin/configurations/1", "/admin/configurations"} {
			p := admin.get(path)
			lacks(t, path, p, key, "sk-web-entered")
			if p.Status != http.StatusOK {
				t.Errorf("GET %s = %d", path, p.Status)
			}
		}
		contains(t, "after saving", admin.get("/admin/configurations/1?saved=1"), "Saved.", "A key is stored.")
		if got, err := e.App.Configs.APIKey(ctx, 1); err != nil || got != key {
			t.Fatalf("stored key = %q, %v; want the key entered", got, err)
		}
		admin.post("/admin/configurations/1", withLLM(e, configForm(map[string]string{"name": "Chat renamed"})))
		if got, _ := e.App.Configs.APIKey(ctx, 1); got != key {
			t.Errorf("saving without a key changed it to %q", got)
		}
		e.LLM.Add(say("pong"))
		probe := admin.post("/admin/configurations/1/test", nil)
		contains(t, "connection test", probe, "Connected: m answered in", "pong")
		lacks(t, "connection test", probe, key)
		reqs := e.LLM.Requests()
		if last := reqs[len(reqs)-1]; last.Authorization != "Bearer "+key || last.MaxTokens > 16 {
			t.Errorf("the test call sent Authorization %q, max tokens %d; want the entered key and a tiny call", last.Authorization, last.MaxTokens)
		}
		a = admin.post("/admin/configurations/1", withLLM(e, configForm(map[string]string{"removeApiKey": "1"})))
		if a.Header.Get("HX-Redirect") == "" {
			t.Fatalf("remove the key = %d: %s", a.Status, a.Body)
		}
		contains(t, "after removing the key", admin.get("/admin/configurations/1"), "No key is stored.")
	})
}

// Screen 3: the connection test shows the provider's classified error.
func TestConnectionTestShowsTheClassifiedProviderError(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		e.LLM.Add(llmtest.Reply{Status: http.StatusUnauthorized, ErrorMessage: "invalid api key"})
		contains(t, "failed test", admin.post("/admin/configurations/1/test", nil), `role="alert"`,
			"The provider refused the call (check key, model and URL).", "(HTTP 401)")
	})
}

// Screen 3: bad input shows a clear error at the field and changes nothing.
func TestConfigurationBadInputShowsTheErrorAtTheFieldAndChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		ctx := context.Background()
		admin := loginAdmin(t, e)
		before, err := e.App.Configs.Get(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name, field, value, message string
		}{
			{"invalid URL", "baseUrl", "not a url", "Enter an http(s) address with a host"},
			{"negative tokens", "maxOutputTokens", "-5", "Max. output tokens must be 0 or more"},
			{"not a number", "contextWindow", "many", "Enter a whole number (not “many”)."},
			{"unknown group", "allowedGroups", "99", "Choose existing groups only. (no group 99)"},
			{"identifier taken", "identifier", "four-eyes", "This name is already taken."},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a := admin.post("/admin/configurations/1", withLLM(e, configForm(map[string]string{tc.field: tc.value, "apiKey": "sk-must-not-be-saved"})))
				if a.Status != http.StatusOK || a.Header.Get("HX-Redirect") != "" {
					t.Fatalf("save = %d, HX-Redirect %q", a.Status, a.Header.Get("HX-Redirect"))
				}
				contains(t, tc.name, a, `<p class="error" role="alert">Nothing was saved.`, `id="e-`+tc.field+`"`, tc.message)
				if tc.field != "allowedGroups" {
					contains(t, tc.name, a, `id="f-`+tc.field+`"`, `aria-invalid="true"`)
				}
				lacks(t, tc.name, a, "sk-must-not-be-saved")
				after, err := e.App.Configs.Get(ctx, 1)
				if err != nil || !after.UpdatedAt.Equal(before.UpdatedAt) || after.BaseURL != before.BaseURL || after.MaxOutputTokens != before.MaxOutputTokens {
					t.Errorf("a refused save changed the configuration: %+v → %+v (%v)", before, after, err)
				}
				if key, _ := e.App.Configs.APIKey(ctx, 1); key != "sk-scenario-secret" {
					t.Errorf("a refused save changed the key to %q", key)
				}
			})
		}
	})
}

// Screen 3: a new configuration is created from the form and listed.
func TestAdministratorCreatesAConfiguration(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		contains(t, "new form", admin.get("/admin/configurations/new"), "<h1>New configuration</h1>", ">Create</button>")
		a := admin.post("/admin/configurations", withLLM(e, configForm(map[string]string{"name": "Drafts", "identifier": "drafts",
			"requireSecondApprover": "1", "privacy": "full", "toolGroups": "content, process", "apiKey": "sk-drafts-1"})))
		if to := a.Header.Get("HX-Redirect"); to != "/admin/configurations/3?saved=1" {
			t.Fatalf("create = %d, HX-Redirect %q: %s", a.Status, to, a.Body)
		}
		c, err := e.App.Configs.Get(context.Background(), 3)
		if err != nil || c.Name != "Drafts" || !c.RequireSecondApprover || c.Privacy != llmconfig.PrivacyFull || !c.HasAPIKey ||
			strings.Join(c.ToolGroups, ",") != "content,process" {
			t.Fatalf("created configuration = %+v, %v", c, err)
		}
		contains(t, "list", admin.get("/admin/configurations"), `<a href="/admin/configurations/3">Drafts</a>`)
	})
}

// Screen 4 and the navigation: the administration home shows what the
// viewer may do; editors and approvers get no admin navigation.
func TestAdminHomeLinksWhatTheViewerMayDo(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		home := admin.get("/admin")
		contains(t, "admin home", home, `<a href="/admin" aria-current="page">Administration</a>`, `href="/admin/skills"`,
			`href="/admin/configurations"`, `href="/admin/users"`, `href="/admin/groups"`, `href="/admin/runs"`)
		otto := login(t, e, "otto", "otto-pass-1234")
		home = otto.get("/admin")
		contains(t, "skill approver's home", home, `href="/admin/skills"`)
		lacks(t, "skill approver's home", home, `href="/admin/configurations"`, `href="/admin/users"`, `href="/admin/runs"`)
		if a := otto.get("/admin/users"); a.Status != http.StatusForbidden {
			t.Errorf("skill approver GET /admin/users = %d, want 403", a.Status)
		}
		for _, who := range []*browser{login(t, e, "erika", "erika-pass-1234"), login(t, e, "paula", "paula-pass-1234")} {
			lacks(t, "editor's navigation", who.get("/chat"), `href="/admin"`)
		}
	})
}

type adminRoute struct {
	Method string `json:"method"`
	Path   string `json:"path"`
}

var pathValue = regexp.MustCompile(`\{[a-z]+\}`)

// Every /admin route the UI mounts (the shared list, kept current by
// TestTheSharedAdminRouteListIsEveryMountedAdminRoute) answers an editor
// and an approver 403 — before any lookup, so known and unknown uids alike
// — and changes nothing; the administrator gets no 403.
func TestNonAdministratorGets403OnEveryAdminRoute(t *testing.T) {
	data, err := os.ReadFile("../../e2e/admin-routes.json")
	if err != nil {
		t.Fatal(err)
	}
	var routes []adminRoute
	if err := json.Unmarshal(data, &routes); err != nil {
		t.Fatal(err)
	}
	// The screens skill approvers may open too (admin_skills.go reviewer).
	reviewerRoutes := map[string]bool{"GET /admin": true, "GET /admin/skills": true, "GET /admin/skills/{uid}": true,
		"POST /admin/skills/{uid}/approve": true, "POST /admin/skills/{uid}/revoke": true}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		users := map[string]*browser{"erika": login(t, e, "erika", "erika-pass-1234"), "paula": login(t, e, "paula", "paula-pass-1234")}
		admin := loginAdmin(t, e)
		for _, rt := range routes {
			for _, id := range []string{"1", "999"} {
				path := pathValue.ReplaceAllString(rt.Path, id)
				for name, b := range users {
					var form url.Values
					if rt.Method != http.MethodGet {
						form = url.Values{"name": {"x"}, "active": {"0"}, "username": {"x"}, "title": {"x"}}
					}
					a := b.do(rt.Method, path, form, "")
					if a.Status != http.StatusForbidden {
						t.Errorf("%s %s %s = %d, want 403", name, rt.Method, path, a.Status)
					}
					want := map[string]string{"erika": "Nur Administratoren dürfen diese Seite öffnen.", "paula": "Only administrators may open this page."}
					if reviewerRoutes[rt.Method+" "+rt.Path] {
						// skill approvers may open these too, and the page says so
						want = map[string]string{"erika": "Nur Administratoren und Skill-Freigebende dürfen diese Seite öffnen.", "paula": "Only administrators and skill approvers may open this page."}
					}
					contains(t, name+" "+path, a, want[name])
				}
				if rt.Method == http.MethodGet && id == "1" {
					if a := admin.get(path); a.Status == http.StatusForbidden {
						t.Errorf("admin GET %s = 403", path)
					}
				}
			}
		}
		if acc := mustAccount(t, e, 1); acc.Username != "admin" || !acc.Active {
			t.Errorf("a refused request changed the administrator: %+v", acc)
		}
	})
}

// Screen 3: the connection test of a configuration without a model (the
// built-in demo provider) says the provider answered, with no blank where
// the model's name would be.
func TestConnectionTestOfAConfigurationWithoutAModelNamesTheProvider(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		admin := loginAdmin(t, e)
		a := admin.post("/admin/configurations/1", withLLM(e, configForm(map[string]string{"providerType": "demo", "model": "", "baseUrl": ""})))
		if a.Header.Get("HX-Redirect") == "" {
			t.Fatalf("save as demo = %d: %s", a.Status, a.Body)
		}
		probe := admin.post("/admin/configurations/1/test", nil)
		contains(t, "connection test", probe, "Connected: the provider answered in")
		lacks(t, "connection test", probe, "Connected:  answered")
	})
}
