package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	mcpgo "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgotypes "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/chat"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// rawSession is an MCP session opened by hand, for messages an SDK client
// would not send (bytes that are not UTF-8) and for reading the wire.
type rawSession struct {
	t       *testing.T
	e       *wt.Env
	headers map[string]string
}

func openRaw(t *testing.T, e *wt.Env, token string) *rawSession {
	t.Helper()
	resp, body := post(t, e, initialize, map[string]string{"Authorization": "Bearer " + token})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	s := &rawSession{t: t, e: e, headers: map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}}
	if resp, body := post(t, e, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, s.headers); resp.StatusCode/100 != 2 {
		t.Fatalf("initialized: %d %s", resp.StatusCode, body)
	}
	return s
}

// send posts one request and returns its JSON-RPC answer (the last data
// line of an event stream, or the JSON body).
func (s *rawSession) send(body string) map[string]any {
	s.t.Helper()
	resp, raw := post(s.t, s.e, body, s.headers)
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("%s: %d %s", body, resp.StatusCode, raw)
	}
	data := raw
	for _, line := range strings.Split(raw, "\n") {
		if rest, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(rest, `"id"`) {
			data = rest
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		s.t.Fatalf("%s: answer %s: %v", body, raw, err)
	}
	return m
}

// toolCode is the API code of a raw tools/call answer's tool error.
func toolCode(m map[string]any) string {
	res, _ := m["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	e, _ := sc["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// Text the JSON API refuses is refused over MCP too, with the same code:
// a NUL byte (which PostgreSQL cannot store) and bytes that are not UTF-8
// (which would be stored as U+FFFD) in send_message, start_tour and
// answer_question; nothing is stored.
func TestTextTheJSONAPIRefusesIsRefusedAsInvalidText(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := tourEnvOn(t, db)
		cs := connect(t, e, wt.Erika, nil)
		v := view(t, "start_tour", call(t, cs, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"}))
		before := len(v.Messages)
		raw := openRaw(t, e, wt.Erika)
		for name, args := range map[string]string{
			"send_message with a NUL":           `{"conversation":` + itoa(v.ID) + `,"content":"Hallo\u0000Welt"}`,
			"send_message not UTF-8":            `{"conversation":` + itoa(v.ID) + `,"content":"Hallo ` + "\xff\xfe" + ` Welt"}`,
			"start_tour with a NUL in message":  `{"page":1,"language":0,"message":"a\u0000b"}`,
			"answer_question not UTF-8 in text": `{"conversation":` + itoa(v.ID) + `,"turnDigest":"x","text":"` + "\xc3\x28" + `"}`,
		} {
			tool, _, _ := strings.Cut(name, " ")
			m := raw.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`)
			if code := toolCode(m); code != "invalid_text" {
				t.Errorf("%s: %v, want the tool error invalid_text", name, m)
			}
		}
		after := wt.Decode[chat.View](t, e.As(wt.Erika).Must("GET", "/api/conversations/"+itoa(v.ID), nil, http.StatusOK))
		if len(after.Messages) != before || after.Status != chat.AwaitingApproval {
			t.Errorf("refused text changed the conversation: %d messages (was %d), %s", len(after.Messages), before, after.Status)
		}
		list := e.As(wt.Erika).Must("GET", "/api/conversations", nil, http.StatusOK).Map(t)
		if convs, _ := list["conversations"].([]any); len(convs) != 1 {
			t.Errorf("a refused start_tour made a conversation: %d", len(convs))
		}
	})
}

// Arguments that do not fit a tool's input schema are a tool error with
// the stable code bad_request, as the JSON API answers a body that does
// not fit.
func TestArgumentsThatDoNotFitTheToolAreBadRequest(t *testing.T) {
	e := tourEnv(t)
	cs := connect(t, e, wt.Erika, nil)
	for name, tc := range map[string]struct {
		tool string
		args map[string]any
	}{
		"a page that is text":           {"start_tour", map[string]any{"page": "eins", "language": 0}},
		"a conversation not given":      {"get_conversation", map[string]any{}},
		"a limit out of range":          {"list_open_points", map[string]any{"limit": 1000}},
		"an after that is no time":      {"get_conversation", map[string]any{"conversation": 1, "after": "gestern"}},
		"a conversation that is a list": {"end_tour", map[string]any{"conversation": []int{1}}},
	} {
		if code := errorCode(t, call(t, cs, tc.tool, tc.args)); code != "bad_request" {
			t.Errorf("%s: code %q, want bad_request", name, code)
		}
	}
}

// A request that belongs to a session but names none is refused 400 in
// the API's error body; initialize (which opens one) is not.
func TestRequestWithoutASessionIdIs400(t *testing.T) {
	e := tourEnv(t)
	h := map[string]string{"Authorization": "Bearer " + wt.Erika}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_pages","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		resp, raw := post(t, e, body, h)
		var b struct {
			Error struct{ Code string } `json:"error"`
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal([]byte(raw), &b) != nil || b.Error.Code != "bad_request" {
			t.Errorf("%s without a session id: %d %s, want 400 bad_request", body, resp.StatusCode, raw)
		}
	}
	if resp, raw := post(t, e, initialize, h); resp.StatusCode != http.StatusOK {
		t.Errorf("initialize without a session id: %d %s", resp.StatusCode, raw)
	}
}

// resourceNotFound is the protocol's code for a resource that is not there
// (up to 2025-11-25).
const resourceNotFound = -32002

// A resource that does not exist, is another user's or is not Waymark's
// answers the protocol's resource-not-found code, -32002.
func TestUnknownResourceIsResourceNotFound(t *testing.T) {
	e := tourEnv(t)
	erika := connect(t, e, wt.Erika, nil)
	v := view(t, "start_tour", call(t, erika, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"}))
	otto := connect(t, e, wt.Otto, nil)
	for _, uri := range []string{"waymark://conversations/" + itoa(v.ID), "waymark://conversations/99999", "waymark://conversations/x",
		"waymark://conversations/", "waymark://pages/1", "file:///etc/passwd"} {
		_, err := otto.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != resourceNotFound {
			t.Errorf("read %s: %v, want code %d", uri, err, resourceNotFound)
		}
	}
}

// A user finds their conversations again: list_conversations lists them
// newest first with their resource URI, resources/list lists them as
// resources — another user's not —, and neither is cacheable publicly.
func TestConversationsCanBeFoundAgain(t *testing.T) {
	e := tourEnv(t)
	erika := connect(t, e, wt.Erika, nil)
	v := view(t, "start_tour", call(t, erika, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"}))
	res := call(t, erika, "list_conversations", map[string]any{})
	var list struct {
		Conversations []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
			URI    string `json:"uri"`
		} `json:"conversations"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &list); err != nil || len(list.Conversations) != 1 || list.Conversations[0].ID != v.ID ||
		list.Conversations[0].URI != "waymark://conversations/"+itoa(v.ID) || list.Conversations[0].Status != string(chat.AwaitingApproval) {
		t.Fatalf("list_conversations = %s", raw)
	}
	resources, err := erika.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resources.Resources) != 1 || resources.Resources[0].URI != "waymark://conversations/"+itoa(v.ID) || !strings.Contains(resources.Resources[0].Title, "Home") {
		t.Errorf("resources/list = %+v, want erika's conversation", resources.Resources)
	}
	otto := connect(t, e, wt.Otto, nil)
	if others, err := otto.ListResources(t.Context(), nil); err != nil || len(others.Resources) != 0 {
		t.Errorf("otto's resources/list = %+v %v, want none", others, err)
	}
	if code := errorCode(t, call(t, otto, "list_conversations", map[string]any{"limit": 0})); code != "" {
		t.Errorf("otto's list_conversations: %s", code)
	}
	r := openRaw(t, e, wt.Erika)
	for _, body := range []string{`{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"waymark://conversations/` + itoa(v.ID) + `"}}`} {
		m := r.send(body)
		res, _ := m["result"].(map[string]any)
		if scope, _ := res["cacheScope"].(string); scope != "private" {
			t.Errorf("%s: cacheScope %q for a user's own data, want private", body, scope)
		}
	}
}

// A start_tour that fails after it made its conversation names it, so the
// client can find it again: here a message sent through the JSON API wins
// the new conversation just before start_tour's own first message (busy).
func TestAFailedStartTourNamesTheConversationItMade(t *testing.T) {
	var (
		e      *wt.Env
		landed atomic.Bool
	)
	e = wt.New(t, storetest.SQLite(t), wt.TourSite, &wt.Options{Workers: 1, BeforeClaim: func(op string) {
		if op != "message" || !landed.CompareAndSwap(false, true) {
			return // the JSON API's own message passes
		}
		e.As(wt.Erika).Must("POST", "/api/conversations/1/messages", map[string]any{"content": "Ich war schneller."}, http.StatusAccepted)
	}})
	e.LLM.Add(wt.TourScript()...)
	cs := connect(t, e, wt.Erika, nil)
	res := call(t, cs, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"})
	if code := errorCode(t, res); code != "busy" {
		t.Fatalf("start_tour: code %q (%s), want busy", code, text(res))
	}
	var body struct {
		Error struct {
			Conversation int64 `json:"conversation"`
		} `json:"error"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(raw, &body) != nil || body.Error.Conversation != 1 || !strings.Contains(text(res), "conversation 1") {
		t.Errorf("the failed start_tour does not name conversation 1: %s / %s", raw, text(res))
	}
}

// Every tool declares an output schema that its structured content
// matches, and annotations: read-only tools say so, answering a card is
// destructive.
func TestEveryToolDeclaresAnOutputSchemaAndAnnotations(t *testing.T) {
	e := tourEnv(t)
	cs := connect(t, e, wt.Erika, nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range tools.Tools {
		if tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s: output schema %v, annotations %v", tool.Name, tool.OutputSchema, tool.Annotations)
			continue
		}
		raw, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: output schema %s: %v", tool.Name, raw, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema %s: %v", tool.Name, raw, err)
		}
		schemas[tool.Name] = r
		a := tool.Annotations
		readOnly := strings.HasPrefix(tool.Name, "list_") || tool.Name == "get_conversation" || tool.Name == "get_campaign" || tool.Name == "estimate_campaign"
		if a.ReadOnlyHint != readOnly {
			t.Errorf("%s: readOnlyHint %v", tool.Name, a.ReadOnlyHint)
		}
		if !readOnly && a.DestructiveHint == nil {
			t.Errorf("%s: no destructiveHint", tool.Name)
		}
		if tool.Name == "answer_card" && (a.DestructiveHint == nil || !*a.DestructiveHint) {
			t.Errorf("answer_card is not marked destructive")
		}
		if readOnly && !a.IdempotentHint {
			t.Errorf("%s: a read is not marked idempotent", tool.Name)
		}
	}
	check := func(name string, args map[string]any) chat.View {
		t.Helper()
		res := call(t, cs, name, args)
		if res.IsError {
			t.Fatalf("%s: %s", name, text(res))
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var content any
		_ = json.Unmarshal(raw, &content)
		if err := schemas[name].Validate(content); err != nil {
			t.Errorf("%s: structured content %s does not match its output schema: %v", name, raw, err)
		}
		var v chat.View
		_ = json.Unmarshal(raw, &v)
		return v
	}
	check("list_pages", map[string]any{})
	check("list_processes", map[string]any{})
	v := check("start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"})
	check("get_conversation", map[string]any{"conversation": v.ID})
	check("list_conversations", map[string]any{})
	check("list_open_points", map[string]any{})
	check("resume_tour", map[string]any{"conversation": v.ID})
	check("answer_card", map[string]any{"conversation": v.ID, "turnDigest": v.Card.TurnDigest, "answer": "apply"})
	check("end_tour", map[string]any{"conversation": v.ID})
}

// A refusal's structured content ({"error": {code, message}}) matches the
// tool's output schema as its result does, for every tool: a client that
// checks a tool error against the schema too (the TypeScript SDK's client,
// once it has listed the tools) reads the refusal's code instead of
// rejecting the answer as malformed. The schemas still hold: an empty
// object, an error without its code, and a result without its required
// fields match none.
func TestEveryToolsRefusalMatchesItsOutputSchema(t *testing.T) {
	e := tourEnv(t)
	cs := connect(t, e, wt.Erika, nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 18 {
		t.Errorf("%d tools, want the 18 (with the campaign and inbox tools)", len(tools.Tools))
	}
	valid := func(s *jsonschema.Resolved, v any) error {
		raw, _ := json.Marshal(v)
		var content any
		_ = json.Unmarshal(raw, &content)
		return s.Validate(content)
	}
	for _, tool := range tools.Tools {
		raw, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: output schema %s: %v", tool.Name, raw, err)
		}
		schema, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema %s: %v", tool.Name, raw, err)
		}
		// Arguments the tool does not take: the SDK's refusal, answered
		// bad_request; an unknown conversation or campaign: the handler's.
		refusals := []map[string]any{{"nichtDa": 1}}
		if props, _ := tool.InputSchema.(map[string]any)["properties"].(map[string]any); props != nil {
			for _, id := range []string{"conversation", "campaign"} {
				if _, ok := props[id]; ok {
					args := map[string]any{id: 999999}
					switch tool.Name {
					case "answer_card":
						args["turnDigest"], args["answer"] = "x", "skip"
					case "answer_question":
						args["turnDigest"], args["option"] = "x", "a"
					case "send_message":
						args["content"] = "Hallo"
					case "answer_campaign_cards":
						args["answer"], args["cards"] = "skip", []any{map[string]any{"conversation": 1, "turnDigest": "x"}}
					}
					refusals = append(refusals, args)
				}
			}
		}
		for _, args := range refusals {
			res := call(t, cs, tool.Name, args)
			code := errorCode(t, res)
			if err := valid(schema, res.StructuredContent); err != nil {
				t.Errorf("%s(%v): the refusal %s does not match the output schema: %v", tool.Name, args, code, err)
			}
			if len(args) > 1 && code != "not_found" {
				t.Errorf("%s(%v): %s, want not_found", tool.Name, args, code)
			}
		}
		for _, bad := range []any{map[string]any{}, map[string]any{"error": map[string]any{"message": "no code"}}, map[string]any{"error": "bad_request"}} {
			if valid(schema, bad) == nil {
				t.Errorf("%s: the output schema admits %v", tool.Name, bad)
			}
		}
	}
}

// A client that tries protocol 2026-07-28 first (server/discover) is
// answered as by a server of the initialize handshake and connects:
// mcp-go's client with its default settings, and the Go SDK's.
func TestAClientTryingANewerProtocolFirstConnects(t *testing.T) {
	e := tourEnv(t)
	c, err := mcpgo.NewStreamableHttpClient(e.URL+"/mcp", mcpgotransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + wt.Erika}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	init, err := c.Initialize(t.Context(), mcpgotypes.InitializeRequest{Params: mcpgotypes.InitializeParams{
		ClientInfo: mcpgotypes.Implementation{Name: "mcp-go-default", Version: "1"}}})
	if err != nil {
		t.Fatalf("mcp-go's default client does not connect: %v", err)
	}
	if init.ProtocolVersion != "2025-11-25" || init.ServerInfo.Name != "waymark" {
		t.Errorf("mcp-go connected on %s to %q, want 2025-11-25 to waymark", init.ProtocolVersion, init.ServerInfo.Name)
	}
	res, err := c.CallTool(t.Context(), mcpgotypes.CallToolRequest{Params: mcpgotypes.CallToolParams{Name: "start_tour",
		Arguments: map[string]any{"page": 1, "language": 0, "process": "seo"}}})
	if err != nil || res.IsError {
		t.Fatalf("mcp-go start_tour: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var v chat.View
	if json.Unmarshal(raw, &v) != nil || v.Status != chat.AwaitingApproval || v.Card == nil {
		t.Errorf("mcp-go start_tour = %s, want the first card", raw)
	}
	cs := connect(t, e, wt.Erika, nil) // the Go SDK's default: 2026-07-28's discovery first
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("the Go SDK negotiated %s, want 2025-11-25", v)
	}
}

// A missing token's 401 says that a Waymark API token is wanted and that
// no OAuth authorization is offered, and points at no OAuth metadata.
func TestAMissingTokenSaysOAuthIsNotOffered(t *testing.T) {
	e := tourEnv(t)
	resp, _ := post(t, e, initialize, nil)
	h := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(h, "Bearer ") || !strings.Contains(h, "OAuth authorization is not offered") || strings.Contains(h, "resource_metadata") {
		t.Errorf("401: %d WWW-Authenticate %q", resp.StatusCode, h)
	}
}

// A client's cancellation of a call is logged as info, not as an error.
func TestACancelledCallIsLoggedAsInfo(t *testing.T) {
	var logs syncBuffer
	e := wt.New(t, storetest.SQLite(t), wt.TourSite, &wt.Options{Workers: 1,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	script := wt.TourScript()
	first := script[0]
	first.Arrived, first.Hold = make(chan struct{}), make(chan struct{})
	e.LLM.Add(first)
	e.LLM.Add(script[1:]...)
	cs := connect(t, e, wt.Erika, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "start_tour", Arguments: map[string]any{"page": 1, "language": 0, "process": "seo"}})
		done <- err
	}()
	<-first.Arrived
	for e.App.Chat.Waiters(1) == 0 {
		time.Sleep(time.Millisecond) // polling a condition, not a synchronisation
	}
	cancel()
	<-done
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "cancelled by the client") {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the cancelled call:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not a synchronisation
	}
	close(first.Hold)
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("the cancelled call was logged as an error: %s", line)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the application's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
