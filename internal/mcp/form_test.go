package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/chat"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// waitConversation reads the conversation through the JSON API until cond
// holds, at most 10 seconds.
func waitConversation(t *testing.T, e *wt.Env, id int64, cond func(chat.View) bool) chat.View {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := wt.Decode[chat.View](t, e.As(wt.Erika).Must("GET", "/api/conversations/"+itoa(id), nil, http.StatusOK))
		if cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("conversation %d: %s outcomes %+v card %v: the condition did not hold within 10 s", id, v.Status, v.Outcomes, v.Card)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, not a synchronisation
	}
}

// The client gives up on start_tour (its request timeout: notifications/
// cancelled) while the first card's form is open; the user answers the form
// afterwards, and the answer is carried out: the description is applied.
func TestAFormAnsweredAfterTheClientGaveUpIsCarriedOut(t *testing.T) {
	e := tourEnv(t)
	gaveUp := make(chan struct{})
	var formCtxErr error
	cs := connect(t, e, wt.Erika, func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		<-gaveUp // the person answers after the client gave up on the call
		formCtxErr = ctx.Err()
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "apply"}}, nil
	})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "start_tour", Arguments: map[string]any{"page": 1, "language": 0, "process": "seo"}})
	if err == nil {
		t.Fatal("start_tour returned before the form was answered")
	}
	close(gaveUp)
	list := e.As(wt.Erika).Must("GET", "/api/conversations", nil, http.StatusOK).Map(t)
	convs, _ := list["conversations"].([]any)
	if len(convs) != 1 {
		t.Fatalf("conversations: %v", list)
	}
	id := int64(convs[0].(map[string]any)["id"].(float64))
	v := waitConversation(t, e, id, func(v chat.View) bool { return len(v.Outcomes) > 0 && v.Status != chat.Processing })
	if v.Outcomes[0].Outcome != "applied" {
		t.Errorf("the late answer's outcome: %+v, want apply", v.Outcomes[0])
	}
	if formCtxErr != nil {
		t.Errorf("the form was withdrawn before it was answered: %v", formCtxErr)
	}
	preview := e.As(wt.Erika).Must("GET", "/api/pages/1/preview?language=0", nil, http.StatusOK)
	if !strings.Contains(string(preview.Body), "Eine neue Beschreibung.") {
		t.Errorf("the page after the late answer lacks the applied description: %s", preview.Body)
	}
	// The tour is resumable card by card: resume_tour asks the next card.
	asked := make(chan string, 4)
	again := connect(t, e, wt.Erika, func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		asked <- req.Params.Message
		return &sdk.ElicitResult{Action: "decline"}, nil
	})
	res := call(t, again, "resume_tour", map[string]any{"conversation": id})
	if rv := view(t, "resume_tour", res); rv.Status != chat.AwaitingApproval || rv.Card == nil || len(rv.Outcomes) != 1 {
		t.Fatalf("resume_tour: %s card %+v, want the next card waiting", rv.Status, rv.Card)
	}
	select {
	case <-asked:
	default:
		t.Error("resume_tour did not ask the next card as a form")
	}
}

// A form left open past FormWait is withdrawn: the tool answers that it was
// not answered, and the answer the user gives after that is refused — the
// card still waits, unanswered.
func TestAFormLeftOpenPastFormWaitIsWithdrawnAndItsAnswerRefused(t *testing.T) {
	e := wt.New(t, storetest.SQLite(t), wt.TourSite, &wt.Options{Workers: 1, MCPFormWait: 300 * time.Millisecond})
	e.LLM.Add(wt.TourScript()...)
	returned := make(chan struct{})
	answered := make(chan struct{}, 1) // the late answer's POST has been answered by the server
	c := sdk.NewClient(&sdk.Implementation{Name: "form-wait-test", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			<-returned // the person answers after the tool call came back
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "apply"}}, nil
		}})
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: e.URL + "/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: watchAnswer{bearer: bearer{token: wt.Erika}, answered: answered}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res := call(t, cs, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"})
	close(returned)
	v := view(t, "start_tour", res)
	if v.Status != chat.AwaitingApproval || v.Card == nil {
		t.Fatalf("after the withdrawn form: %s, want the card waiting", v.Status)
	}
	if !strings.Contains(text(res), "not answered") {
		t.Errorf("the answer does not say the form was not answered: %s", text(res))
	}
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("the late answer was not sent")
	}
	again := view(t, "get_conversation", call(t, cs, "get_conversation", map[string]any{"conversation": v.ID}))
	if again.Status != chat.AwaitingApproval || again.Card == nil || again.Card.TurnDigest != v.Card.TurnDigest || len(again.Outcomes) != 0 {
		t.Errorf("after the refused late answer: %s card %+v outcomes %+v, want the same card, unanswered", again.Status, again.Card, again.Outcomes)
	}
}

// watchAnswer is bearer that signals answered once a POST carrying a form's
// answer (a JSON-RPC result with an action) has been answered.
type watchAnswer struct {
	bearer
	answered chan struct{}
}

func (w watchAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := w.bearer.RoundTrip(r)
	if err == nil && bytes.Contains(body, []byte(`"action":"accept"`)) {
		select {
		case w.answered <- struct{}{}:
		default:
		}
	}
	return resp, err
}

// While a form is open, a call that asked for progress gets a progress
// notification every FormProgress: a client that resets its request
// timeout on progress keeps waiting for a person who takes minutes.
func TestProgressIsSentWhileAFormIsOpen(t *testing.T) {
	e := wt.New(t, storetest.SQLite(t), wt.TourSite, &wt.Options{Workers: 1, MCPFormProgress: 50 * time.Millisecond})
	e.LLM.Add(wt.TourScript()...)
	var (
		mu      sync.Mutex
		waiting int
		steps   []float64
	)
	c := sdk.NewClient(&sdk.Implementation{Name: "form-progress-test", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			time.Sleep(600 * time.Millisecond) // a person reading the card
			return &sdk.ElicitResult{Action: "decline"}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			steps = append(steps, req.Params.Progress)
			if strings.Contains(req.Params.Message, "form") {
				waiting++
			}
		}})
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: e.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: wt.Erika}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "start_tour", Arguments: map[string]any{"page": 1, "language": 0, "process": "seo"}}
	params.SetProgressToken("form-1")
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if waiting < 3 {
		t.Errorf("%d progress notifications while the form was open 600 ms (every 50 ms), want several", waiting)
	}
	for i := 1; i < len(steps); i++ {
		if steps[i] <= steps[i-1] {
			t.Errorf("progress went %v", steps)
			break
		}
	}
}

// Forms follow the negotiated protocol version: 2025-11-25 titles the
// answers with oneOf, 2025-06-18 with enum and enumNames.
func TestFormsFollowTheNegotiatedVersion(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    []string
	}{
		{"2025-11-25", []string{`"oneOf":[`, `"const":"apply"`, `"title":"Übernehmen"`}},
		{"2025-06-18", []string{`"enum":["apply"`, `"enumNames":["Übernehmen"`}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			e := tourEnv(t)
			var schema string
			c := sdk.NewClient(&sdk.Implementation{Name: "version-test", Version: "1"}, &sdk.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					raw, _ := json.Marshal(req.Params.RequestedSchema)
					schema = string(raw)
					return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "apply"}}, nil
				}})
			cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: e.URL + "/mcp",
				HTTPClient: &http.Client{Transport: bearer{token: wt.Erika}}, DisableStandaloneSSE: true}, &sdk.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != tc.version {
				t.Fatalf("negotiated %s, want %s", got, tc.version)
			}
			_, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "start_tour", Arguments: map[string]any{"page": 1, "language": 0, "process": "seo"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(schema, w) {
					t.Errorf("the form of %s lacks %s: %s", tc.version, w, schema)
				}
			}
		})
	}
}
