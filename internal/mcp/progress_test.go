package mcp_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/chat"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// While the model works, a client that asked for progress (a progress
// token) gets progress notifications for its call, increasing.
func TestProgressIsNotifiedWhileTheModelWorks(t *testing.T) {
	e := wt.New(t, storetest.SQLite(t), wt.TourSite, &wt.Options{Workers: 1})
	script := wt.TourScript()
	first := script[0]
	first.Arrived, first.Hold = make(chan struct{}), make(chan struct{})
	e.LLM.Add(first)
	e.LLM.Add(script[1:]...)
	// The model answers once the tool waits for the turn (a waiter on
	// conversation 1, the first of the fresh database): its answer is then
	// a change the waiting tool sees.
	go func() {
		<-first.Arrived
		for e.App.Chat.Waiters(1) == 0 {
			time.Sleep(time.Millisecond) // polling a condition, not a synchronisation
		}
		close(first.Hold)
	}()
	var (
		mu    sync.Mutex
		steps []float64
		got   = make(chan struct{}, 64)
	)
	c := sdk.NewClient(&sdk.Implementation{Name: "progress-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			if req.Params.ProgressToken == "tour-1" {
				steps = append(steps, req.Params.Progress)
				got <- struct{}{}
			}
		}})
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: e.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: wt.Erika}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "start_tour", Arguments: map[string]any{"page": 1, "language": 0, "process": "seo"}}
	params.SetProgressToken("tour-1")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	if v := view(t, "start_tour", res); v.Status != chat.AwaitingApproval {
		t.Fatalf("start_tour: %s, want the first card", v.Status)
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no progress notification while the first turn ran")
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(steps); i++ {
		if steps[i] <= steps[i-1] {
			t.Errorf("progress went %v", steps)
		}
	}
}
