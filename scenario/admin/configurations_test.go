package admin_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

const newKey = "sk-admin-entered-9f3a7c"

func newConfiguration(baseURL string) map[string]any {
	return map[string]any{
		"identifier": "review", "name": "Review", "active": true,
		"providerType": "openai", "baseUrl": baseURL, "model": "m-large", "apiKey": newKey,
		"contextWindow": 64000, "maxOutputTokens": 4000, "requireSecondApprover": true,
		"allowedGroups": []int{1}, "systemPrompt": "Be brief.", "privacy": "redacted",
		"toolGroups": []string{"content"},
	}
}

func TestAdministratorCreatesAndEditsAConfiguration(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		created := wt.Decode[wt.AdminConfiguration](t, admin.Must("POST", "/api/admin/configurations", newConfiguration(e.LLM.URL()), http.StatusCreated))
		uid := created.UID
		if uid <= 2 || created.Identifier != "review" || !created.HasAPIKey || created.Privacy != "redacted" ||
			created.ContextWindow != 64000 || !created.RequireSecondApprover {
			t.Fatalf("created = %+v, want a new uid, identifier review, hasApiKey, privacy redacted", created)
		}
		path := "/api/admin/configurations/" + itoa(float64(uid))
		got := wt.Decode[wt.AdminConfiguration](t, admin.Must("GET", path, nil, http.StatusOK))
		if got.SystemPrompt != "Be brief." || got.Model != "m-large" {
			t.Errorf("GET %s = %+v", path, got)
		}
		list := wt.Decode[wt.AdminConfigurations](t, admin.Must("GET", "/api/admin/configurations", nil, http.StatusOK))
		if n := len(list.Configurations); n != 3 {
			t.Errorf("list has %d configurations, want 3: %+v", n, list)
		}

		// PUT replaces the fields; a key left out is kept.
		upd := newConfiguration(e.LLM.URL())
		delete(upd, "apiKey")
		upd["name"], upd["active"], upd["maxOutputTokens"], upd["allowedGroups"] = "Review 2", false, 0, []int{}
		got = wt.Decode[wt.AdminConfiguration](t, admin.Must("PUT", path, upd, http.StatusOK))
		if got.Name != "Review 2" || got.Active || !got.HasAPIKey || got.AllowedGroups == nil || len(got.AllowedGroups) != 0 {
			t.Errorf("PUT = %+v, want Review 2, inactive, key kept, no groups", got)
		}
		// A GET answer sent back as it is (raw, every field it has) changes nothing and keeps the key.
		again := wt.Decode[wt.AdminConfiguration](t, admin.Must("PUT", path, admin.Must("GET", path, nil, 200).Map(t), http.StatusOK))
		if !again.HasAPIKey || again.Name != "Review 2" {
			t.Errorf("PUT of the GET answer = %+v, want it unchanged with the key kept", again)
		}
		// An empty key removes it.
		upd["apiKey"] = ""
		if got = wt.Decode[wt.AdminConfiguration](t, admin.Must("PUT", path, upd, http.StatusOK)); got.HasAPIKey {
			t.Errorf("PUT with apiKey \"\" = %+v, want hasApiKey false", got)
		}
	})
}

// The issue: "a provider key entered once is never shown again".
func TestProviderKeyEnteredOnceIsNeverShownAgain(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		r := admin.Must("POST", "/api/admin/configurations", newConfiguration(e.LLM.URL()), http.StatusCreated)
		uid := wt.Decode[wt.AdminConfiguration](t, r).UID
		path := "/api/admin/configurations/" + itoa(float64(uid))
		upd := newConfiguration(e.LLM.URL())
		delete(upd, "apiKey")
		bodies := []wt.Response{r, admin.Must("GET", path, nil, 200), admin.Must("GET", "/api/admin/configurations", nil, 200),
			admin.Must("PUT", path, upd, 200), admin.Must("GET", "/api/admin/configurations/1", nil, 200)}
		for i, b := range bodies {
			if strings.Contains(string(b.Body), newKey) || strings.Contains(string(b.Body), "sk-scenario-secret") ||
				strings.Contains(string(b.Body), "apiKey\"") {
				t.Errorf("answer %d shows a key: %s", i, b.Body)
			}
		}
		var sealed string
		if err := db.QueryRow(context.Background(), "SELECT api_key_sealed FROM configurations WHERE uid = ?", uid).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if sealed == "" || strings.Contains(sealed, newKey) {
			t.Errorf("stored key = %q, want it sealed", sealed)
		}
		// The kept key is the one the provider receives.
		e.LLM.Add(llmtest.Reply{Content: "pong"})
		admin.Must("POST", path+"/test", nil, http.StatusOK)
		reqs := e.LLM.Requests()
		if len(reqs) != 1 || reqs[0].Authorization != "Bearer "+newKey {
			t.Errorf("provider saw %d requests, authorization %q, want the entered key", len(reqs), reqs[len(reqs)-1].Authorization)
		}
	})
}

func TestTestConnectionAnswersTheReplyOrTheClassifiedError(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		e.LLM.Add(llmtest.Reply{Content: "pong"})
		got := wt.Decode[wt.ConnectionTest](t, admin.Must("POST", "/api/admin/configurations/1/test", nil, http.StatusOK))
		if !got.OK || got.Reply != "pong" || got.Model != "m" {
			t.Errorf("test = %+v, want ok with reply pong from model m", got)
		}
		reqs := e.LLM.Requests()
		if len(reqs) != 1 || reqs[0].MaxTokens <= 0 || reqs[0].MaxTokens > 64 || len(reqs[0].Tools) != 0 {
			t.Errorf("requests = %+v, want one tiny call without tools", reqs)
		}
		e.LLM.Add(llmtest.Reply{Status: 401, ErrorMessage: "invalid api key"})
		got = wt.Decode[wt.ConnectionTest](t, admin.Must("POST", "/api/admin/configurations/1/test", nil, http.StatusOK))
		errObj := got.Error
		if got.OK || errObj == nil || errObj.Kind != "not_retryable" || errObj.Status != 401 ||
			!strings.Contains(errObj.Message, "invalid api key") {
			t.Errorf("test against a 401 = %+v, want ok false with kind not_retryable, status 401 and the message", got)
		}
		// A server that echoes the key in its error does not get it shown.
		e.LLM.Add(llmtest.Reply{Status: 401, ErrorMessage: "Incorrect API key provided: sk-scenario-secret"})
		echoed := admin.Must("POST", "/api/admin/configurations/1/test", nil, http.StatusOK)
		if strings.Contains(string(echoed.Body), "sk-scenario-secret") || !strings.Contains(string(echoed.Body), "Incorrect API key provided") {
			t.Errorf("test against a server echoing the key = %s, want the message without the key", echoed.Body)
		}
		e.LLM.Add(llmtest.Reply{Content: "pong"})
		if strings.Contains(string(admin.Must("POST", "/api/admin/configurations/1/test", nil, 200).Body), "sk-scenario-secret") {
			t.Errorf("a test answer shows the key")
		}
	})
}

func TestConfigurationBadInputIsRefusedNamingTheFieldAndChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		before := admin.Must("GET", "/api/admin/configurations/1", nil, 200).Map(t)
		list := admin.Must("GET", "/api/admin/configurations", nil, 200).Map(t)
		for _, tc := range []struct {
			field  string
			value  any
			status int
		}{
			{"contextWindow", 0, 400},
			{"maxOutputTokens", 64000, 400},
			{"privacy", "everything", 400},
			{"baseUrl", "ftp://example.org", 400},
			{"identifier", "Not A Slug", 400},
			{"providerType", "claude", 400},
			{"allowedGroups", []int{99}, 400},
			{"identifier", "four-eyes", 409},
		} {
			body := newConfiguration(e.LLM.URL())
			body[tc.field] = tc.value
			refused(t, admin.Do("POST", "/api/admin/configurations", body), tc.status, tc.field, "POST with "+tc.field)
			refused(t, admin.Do("PUT", "/api/admin/configurations/1", body), tc.status, tc.field, "PUT with "+tc.field)
		}
		refused(t, admin.Do("POST", "/api/admin/configurations", `{"identifier": "x", "colour": "red"}`), 400, "colour", "unknown field")
		unchanged(t, admin, "/api/admin/configurations/1", before, "bad input")
		unchanged(t, admin, "/api/admin/configurations", list, "bad input")
	})
}

func TestUnknownConfigurationIsNotFound(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		admin.Must("GET", "/api/admin/configurations/999", nil, http.StatusNotFound)
		admin.Must("PUT", "/api/admin/configurations/999", newConfiguration(e.LLM.URL()), http.StatusNotFound)
		admin.Must("POST", "/api/admin/configurations/999/test", nil, http.StatusNotFound)
		admin.Must("GET", "/api/admin/configurations/abc", nil, http.StatusNotFound)
		if n := len(wt.Decode[wt.AdminConfigurations](t, admin.Must("GET", "/api/admin/configurations", nil, 200)).Configurations); n != 2 {
			t.Errorf("PUT of an unknown uid created a configuration: %d listed", n)
		}
	})
}

func itoa(f float64) string { return strconv.FormatInt(int64(f), 10) }
