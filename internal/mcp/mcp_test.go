package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/chat"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// bearer adds an API token to every request of an MCP client.
type bearer struct {
	token string
	extra map[string]string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	for k, v := range b.extra {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// tourEnv is the tour fixture with the model's script of one tour, on SQLite.
func tourEnv(t *testing.T) *wt.Env {
	t.Helper()
	return tourEnvOn(t, storetest.SQLite(t))
}

// tourEnvOn is tourEnv on db.
func tourEnvOn(t *testing.T, db *store.DB) *wt.Env {
	t.Helper()
	e := wt.New(t, db, wt.TourSite, &wt.Options{Workers: 1})
	e.LLM.Add(wt.TourScript()...)
	return e
}

// connect opens an MCP session on the env's /mcp as the token's user;
// elicit, when set, answers elicitation requests (the client then declares
// the capability).
func connect(t *testing.T, e *wt.Env, token string, elicit func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error)) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "waymark-test", Version: "1"}, &sdk.ClientOptions{ElicitationHandler: elicit})
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: e.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: token}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect as %s: %v", token, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its result, failing the test on a protocol error.
func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return res
}

// view decodes a successful tool result as a conversation.
func view(t *testing.T, name string, res *sdk.CallToolResult) chat.View {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s = tool error %s", name, text(res))
	}
	var v chat.View
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, raw, err)
	}
	return v
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// errorCode is the API code of a tool error ("" when the call succeeded).
func errorCode(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if !res.IsError {
		return ""
	}
	var body struct {
		Error struct{ Code string } `json:"error"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(raw, &body)
	if body.Error.Code == "" {
		t.Fatalf("tool error without a code: %s", text(res))
	}
	return body.Error.Code
}

func TestToolsListTheTourTools(t *testing.T) {
	e := tourEnv(t)
	cs := connect(t, e, wt.Erika, nil)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
	}
	want := []string{"answer_campaign_cards", "answer_card", "answer_question", "end_tour", "estimate_campaign", "get_campaign", "get_conversation", "list_campaign_cards", "list_conversations", "list_inbox", "list_open_points", "list_pages", "list_processes", "release_card", "resume_tour", "send_message", "start_campaign", "start_tour"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
}

func TestListPagesAndProcessesShowWhatTheUserMayWorkOn(t *testing.T) {
	e := tourEnv(t)
	cs := connect(t, e, wt.Erika, nil)
	pages := call(t, cs, "list_pages", map[string]any{})
	if pages.IsError || !strings.Contains(text(pages), "Home (uid 1)") || !strings.Contains(text(pages), "Deutsch (uid 1)") {
		t.Fatalf("list_pages = %s", text(pages))
	}
	procs := call(t, cs, "list_processes", map[string]any{})
	if procs.IsError || !strings.Contains(text(procs), "seo (uid 12)") {
		t.Fatalf("list_processes = %s", text(procs))
	}
	if code := errorCode(t, call(t, cs, "list_processes", map[string]any{"configuration": 99})); code != "not_found" {
		t.Fatalf("list_processes of an unknown configuration: code %q, want not_found", code)
	}
}

// The tour without elicitation: each card comes back from the tool and is
// answered with answer_card, as the JSON API's client answers it.
func TestTourAnsweredThroughAnswerCard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := tourEnvOn(t, db)
		cs := connect(t, e, wt.Erika, nil)
		v := view(t, "start_tour", call(t, cs, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"}))
		for _, answer := range wt.TourAnswers {
			if v.Status != chat.AwaitingApproval || v.Card == nil {
				t.Fatalf("before %s: conversation %s, want a card", answer, v.Status)
			}
			if !slices.Contains(v.Card.Answers, answer) {
				t.Fatalf("card offers %v, not %s", v.Card.Answers, answer)
			}
			v = view(t, "answer_card", call(t, cs, "answer_card", map[string]any{"conversation": v.ID, "turnDigest": v.Card.TurnDigest, "answer": answer}))
		}
		if v.Status != chat.Idle || v.Summary == nil {
			t.Fatalf("after the last card: status %s summary %v, want idle with a summary", v.Status, v.Summary)
		}
		if v.Summary.Applied != 1 || v.Summary.Skipped != 1 || v.Summary.Kept != 1 {
			t.Errorf("summary = %+v, want 1 applied, 1 skipped, 1 kept", *v.Summary)
		}
		// The JSON API shows the same conversation.
		api := wt.Decode[chat.View](t, e.As(wt.Erika).Must("GET", "/api/conversations/"+itoa(v.ID), nil, http.StatusOK))
		if api.Summary == nil || *api.Summary != *v.Summary {
			t.Errorf("JSON API summary %v, MCP %v", api.Summary, v.Summary)
		}
		checkPageAndOpenPoints(t, e, cs)
		ended := view(t, "end_tour", call(t, cs, "end_tour", map[string]any{"conversation": v.ID}))
		if ended.ID != v.ID {
			t.Errorf("end_tour answered conversation %d", ended.ID)
		}
	})
}

// The tour by elicitation: start_tour asks every card of the user and
// returns the tour's end.
func TestTourAnsweredByElicitation(t *testing.T) {
	e := tourEnv(t)
	var (
		mu       sync.Mutex
		asked    []string
		messages []string
	)
	cs := connect(t, e, wt.Erika, func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		n := len(asked)
		if n >= len(wt.TourAnswers) {
			t.Errorf("elicitation %d: more cards than the tour has: %s", n, req.Params.Message)
			return &sdk.ElicitResult{Action: "cancel"}, nil
		}
		answer := wt.TourAnswers[n]
		raw, _ := json.Marshal(req.Params.RequestedSchema)
		if !strings.Contains(string(raw), `"const":"`+answer+`"`) {
			t.Errorf("elicitation %d offers %s, not %s", n, raw, answer)
		}
		asked = append(asked, answer)
		messages = append(messages, req.Params.Message)
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": answer}}, nil
	})
	v := view(t, "start_tour", call(t, cs, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"}))
	if v.Status != chat.Idle || v.Summary == nil {
		t.Fatalf("start_tour by elicitation ended %s (summary %v), want idle with a summary: %s", v.Status, v.Summary, text(&sdk.CallToolResult{}))
	}
	if !slices.Equal(asked, wt.TourAnswers) {
		t.Fatalf("answered %v, want %v", asked, wt.TourAnswers)
	}
	// The first card: the page, the field, its current and proposed value (Erika reads German).
	first := messages[0]
	for _, want := range []string{"Home", "Eine neue Beschreibung.", "Aktuell"} {
		if !strings.Contains(first, want) {
			t.Errorf("first card's message lacks %q:\n%s", want, first)
		}
	}
	if v.Summary.Applied != 1 || v.Summary.Skipped != 1 || v.Summary.Kept != 1 {
		t.Errorf("summary = %+v, want 1 applied, 1 skipped, 1 kept", *v.Summary)
	}
	checkPageAndOpenPoints(t, e, cs)
}

// checkPageAndOpenPoints checks through the JSON API what the tour wrote
// (the applied description) and that list_open_points lists what the
// dashboard lists.
func checkPageAndOpenPoints(t *testing.T, e *wt.Env, cs *sdk.ClientSession) {
	t.Helper()
	erika := e.As(wt.Erika)
	preview := erika.Must("GET", "/api/pages/1/preview?language=0", nil, http.StatusOK)
	if !strings.Contains(string(preview.Body), "Eine neue Beschreibung.") {
		t.Errorf("page 1 after the tour lacks the applied description: %s", preview.Body)
	}
	var api, viaMCP struct {
		OpenPoints []map[string]any `json:"openPoints"`
	}
	erika.Must("GET", "/api/open-points", nil, http.StatusOK).JSON(t, &api)
	res := call(t, cs, "list_open_points", map[string]any{})
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &viaMCP); err != nil || res.IsError {
		t.Fatalf("list_open_points: %s", text(res))
	}
	if len(api.OpenPoints) != len(viaMCP.OpenPoints) {
		t.Errorf("list_open_points lists %d, the dashboard %d", len(viaMCP.OpenPoints), len(api.OpenPoints))
	}
	t.Logf("open points after the tour: %d", len(api.OpenPoints))
}

// Declining a form leaves the card waiting; answer_card then answers it.
func TestDeclinedElicitationLeavesTheCardWaiting(t *testing.T) {
	e := tourEnv(t)
	cs := connect(t, e, wt.Erika, func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "decline"}, nil
	})
	res := call(t, cs, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"})
	v := view(t, "start_tour", res)
	if v.Status != chat.AwaitingApproval || v.Card == nil {
		t.Fatalf("after a declined form: %s, want the card waiting", v.Status)
	}
	if !strings.Contains(text(res), "decline") {
		t.Errorf("the answer does not say the form was declined: %s", text(res))
	}
	again := view(t, "get_conversation", call(t, cs, "get_conversation", map[string]any{"conversation": v.ID}))
	if again.Card == nil || again.Card.TurnDigest != v.Card.TurnDigest {
		t.Fatalf("the card did not stay: %+v", again.Card)
	}
}

// A conversation of another user answers like one that does not exist,
// and a stale card changes nothing.
func TestForeignConversationAnswersLikeAnUnknownOne(t *testing.T) {
	e := tourEnv(t)
	erika := connect(t, e, wt.Erika, nil)
	v := view(t, "start_tour", call(t, erika, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"}))
	otto := connect(t, e, wt.Otto, nil)
	for _, id := range []int64{v.ID, 99999} {
		for _, tool := range []string{"get_conversation", "end_tour"} {
			if code := errorCode(t, call(t, otto, tool, map[string]any{"conversation": id})); code != "not_found" {
				t.Errorf("otto %s(%d): code %q, want not_found", tool, id, code)
			}
		}
		args := map[string]any{"conversation": id, "turnDigest": v.Card.TurnDigest, "answer": "apply"}
		if code := errorCode(t, call(t, otto, "answer_card", args)); code != "not_found" {
			t.Errorf("otto answer_card(%d): code %q, want not_found", id, code)
		}
	}
	stale := call(t, erika, "answer_card", map[string]any{"conversation": v.ID, "turnDigest": "not-the-card", "answer": "apply"})
	if code := errorCode(t, stale); code != "stale_card" {
		t.Errorf("a stale card: code %q, want stale_card", code)
	}
	after := view(t, "get_conversation", call(t, erika, "get_conversation", map[string]any{"conversation": v.ID}))
	if after.Status != chat.AwaitingApproval || after.Card.TurnDigest != v.Card.TurnDigest || len(after.Outcomes) != 0 {
		t.Errorf("after refused answers the conversation changed: %s %+v", after.Status, after.Outcomes)
	}
}

// Malformed arguments are a clear tool error, and nothing starts.
func TestMalformedArgumentsAreAToolErrorAndChangeNothing(t *testing.T) {
	e := tourEnv(t)
	cs := connect(t, e, wt.Erika, nil)
	for name, args := range map[string]map[string]any{
		"a page that is text":  {"page": "eins", "language": 0, "process": "seo"},
		"an unknown process":   {"page": 1, "language": 0, "process": "no-such-process"},
		"a page that is 0":     {"page": 0, "language": 0, "process": "seo"},
		"a language not given": {"page": 1, "language": 7, "process": "seo"},
	} {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "start_tour", Arguments: args})
		if err == nil && !res.IsError {
			t.Errorf("%s: start_tour succeeded: %s", name, text(res))
			continue
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		} else {
			msg = text(res)
		}
		t.Logf("%s: %s", name, msg)
	}
	list := e.As(wt.Erika).Must("GET", "/api/conversations", nil, http.StatusOK).Map(t)
	if convs, _ := list["conversations"].([]any); len(convs) != 0 {
		t.Errorf("refused starts left %d conversations", len(convs))
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// list_processes names each process in the user's UI language where the
// site gave it a name there (English for paula, German for erika), else by
// its SKILL.md's name.
func TestListProcessesNamesAProcessInTheUsersLanguage(t *testing.T) {
	site := strings.Replace(wt.TourSite, "    identifier: seo\n", "    identifier: seo\n    names: {en: Optimise SEO}\n", 1)
	e := wt.New(t, storetest.SQLite(t), site, nil)
	for token, want := range map[string]string{wt.Paula: ": Optimise SEO — ", wt.Erika: ": SEO optimieren — "} {
		procs := call(t, connect(t, e, token, nil), "list_processes", map[string]any{})
		if procs.IsError || !strings.Contains(text(procs), want) {
			t.Errorf("list_processes as %s = %s, want %q", token, text(procs), want)
		}
	}
}
