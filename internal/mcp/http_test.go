package mcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	wt "waymark/internal/waymarktest"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends one JSON-RPC message to /mcp with headers and returns the answer.
func post(t *testing.T, e *wt.Env, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", e.URL+"/mcp", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

// A request without a valid API token is answered 401 before anything else,
// as the JSON API answers it; a session cookie does not do.
func TestRequestWithoutAValidTokenIs401(t *testing.T) {
	e := tourEnv(t)
	for name, h := range map[string]map[string]string{
		"no credential":                       {},
		"a wrong token":                       {"Authorization": "Bearer token-nobody-000"},
		"a malformed header":                  {"Authorization": "Basic " + wt.Erika},
		"a session cookie":                    {"Cookie": "waymark_session=whatever"},
		"a wrong token, and a foreign origin": {"Authorization": "Bearer nope", "Origin": "https://evil.example"},
	} {
		resp, body := post(t, e, initialize, h)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d %s, want 401", name, resp.StatusCode, body)
			continue
		}
		var b struct {
			Error struct{ Code string } `json:"error"`
		}
		if json.Unmarshal([]byte(body), &b) != nil || b.Error.Code != "unauthenticated" {
			t.Errorf("%s: body %s, want the API's error code unauthenticated", name, body)
		}
		if resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate header", name)
		}
	}
}

// A request from a web page of another origin is refused (DNS rebinding);
// the server's own origin and a request without Origin are served.
func TestForeignOriginIs403(t *testing.T) {
	e := tourEnv(t)
	resp, body := post(t, e, initialize, map[string]string{"Authorization": "Bearer " + wt.Erika, "Origin": "https://evil.example"})
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a foreign Origin: %d %s, want 403", resp.StatusCode, body)
	}
	for _, origin := range []string{"", e.URL} {
		h := map[string]string{"Authorization": "Bearer " + wt.Erika}
		if origin != "" {
			h["Origin"] = origin
		}
		if resp, body := post(t, e, initialize, h); resp.StatusCode != http.StatusOK {
			t.Errorf("Origin %q: %d %s, want 200", origin, resp.StatusCode, body)
		}
	}
}

// A session is bound to the user that opened it: another user's token
// cannot use it.
func TestSessionIsBoundToItsUser(t *testing.T) {
	e := tourEnv(t)
	resp, body := post(t, e, initialize, map[string]string{"Authorization": "Bearer " + wt.Erika})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s (session %q)", resp.StatusCode, body, sid)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	headers := func(token string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	}
	if resp, body := post(t, e, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers(wt.Erika)); resp.StatusCode/100 != 2 {
		t.Fatalf("initialized: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, e, list, headers(wt.Otto)); resp.StatusCode != http.StatusForbidden {
		t.Errorf("otto on erika's session: %d %s, want 403", resp.StatusCode, body)
	}
	if resp, body := post(t, e, list, headers(wt.Erika)); resp.StatusCode != http.StatusOK {
		t.Errorf("erika on her session: %d %s, want 200", resp.StatusCode, body)
	}
}

// DNS rebinding: on a loopback listener a request naming a foreign Host is
// refused, unless it is the host of the public URL a reverse proxy passes on.
func TestForeignHostOnALoopbackListenerIs403(t *testing.T) {
	e := tourEnv(t)
	h := map[string]string{"Authorization": "Bearer " + wt.Erika}
	req := func(url, host string) int {
		r, err := http.NewRequestWithContext(t.Context(), "POST", url+"/mcp", bytes.NewBufferString(initialize))
		if err != nil {
			t.Fatal(err)
		}
		r.Host = host
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range h {
			r.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := req(e.URL, "evil.example.com"); got != http.StatusForbidden {
		t.Errorf("a foreign Host: %d, want 403", got)
	}
	public := httptest.NewServer(e.App.MCP.Handler(e.App.Server, []string{"https://waymark.example"}))
	defer public.Close()
	if got := req(public.URL, "waymark.example"); got != http.StatusOK {
		t.Errorf("the public URL's host behind a proxy: %d, want 200", got)
	}
	if got := req(public.URL, "evil.example.com"); got != http.StatusForbidden {
		t.Errorf("a foreign Host beside a public URL: %d, want 403", got)
	}
}
