package app_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/app"
	"waymark/internal/auth"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// worker is a worker process on db (`waymark worker`): Run until stop is
// called, as SIGTERM ends it; done is closed once Run returned err.
type worker struct {
	app  *app.App
	stop context.CancelFunc
	done chan struct{}
	err  error
}

func startWorker(t *testing.T, db *store.DB, shutdown time.Duration) *worker {
	t.Helper()
	a, err := app.New(context.Background(), db, &app.Config{Key: bytes.Repeat([]byte{7}, 32), Workers: 1, ChatWorkers: 1,
		PollInterval: 20 * time.Millisecond, HashCost: auth.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	w := &worker{app: a, stop: stop, done: make(chan struct{})}
	started := make(chan struct{})
	go func() {
		defer close(w.done)
		w.err = a.Run(ctx, app.RunConfig{ShutdownTimeout: shutdown, Started: func() { close(started) }})
	}()
	<-started
	t.Cleanup(func() {
		stop()
		<-w.done
	})
	return w
}

// conversation starts a tour on page 1 and sends its first message; the
// worker's model call is under way when it returns.
func conversation(t *testing.T, api *wt.Env, erika *wt.Client, arrived chan struct{}) int64 {
	t.Helper()
	conv, r := erika.StartConversation(wt.StartConversation{Page: 1, Skill: wt.TourSkill})
	if r.Status != http.StatusCreated {
		t.Fatalf("POST /api/conversations = %d: %s", r.Status, r.Body)
	}
	erika.Must("POST", "/api/conversations/"+itoa(conv.ID)+"/messages", map[string]any{"content": "Los"}, http.StatusAccepted)
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the worker did not call the model within 20s")
	}
	return conv.ID
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// until reads the conversation until it is no longer processing, for at most limit.
func until(t *testing.T, erika *wt.Client, id int64, limit time.Duration) wt.Conversation {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		conv := wt.Decode[wt.Conversation](t, erika.Must("GET", "/api/conversations/"+itoa(id), nil, http.StatusOK))
		if conv.Status != "processing" {
			return conv
		}
		if time.Now().After(deadline) {
			t.Fatalf("conversation %d still processing after %v", id, limit)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, not a synchronisation
	}
}

// Graceful shutdown: SIGTERM while a chat turn waits on the model. The stop
// waits for the turn, and the model's reply, which arrives after the stop
// began, is applied: the conversation shows the answer. (Regression: the
// job ran under the signal's context, and the reply ended in "apply run:
// context canceled"; after the restart the conversation answered busy for
// a lease and then ended with an empty assistant message.)
func TestAModelReplyThatArrivesAfterTheStopBeganIsApplied(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		api := wt.New(t, db, wt.TourSite, &wt.Options{APIOnly: true})
		w := startWorker(t, another(), 20*time.Second)
		arrived, hold := make(chan struct{}), make(chan struct{})
		api.LLM.Add(llmtest.Reply{Content: "Fertig.", Arrived: arrived, Hold: hold})
		erika := api.As(wt.Erika)
		id := conversation(t, api, erika, arrived)

		began := time.Now()
		w.stop() // SIGTERM
		select {
		case <-w.done:
			t.Fatalf("the stop returned (%v) while a turn still waited on the model", w.err)
		case <-time.After(300 * time.Millisecond): // the stop waits for the turn
		}
		close(hold)
		select {
		case <-w.done:
			if w.err != nil {
				t.Fatalf("the stop = %v, want nil", w.err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the stop did not return within 15s of the reply")
		}
		took := time.Since(began)
		conv := until(t, erika, id, 5*time.Second)
		last := conv.Messages[len(conv.Messages)-1]
		if conv.Status != "idle" || last.Role != "assistant" || last.Content != "Fertig." {
			t.Fatalf("after the stop: status %s, last message %+v (error %q); want idle with the model's answer", conv.Status, last, conv.Error)
		}
		if st := erika.MustRun(conv.LastRunUUID); st.Status != "completed" {
			t.Errorf("the turn's run = %s, want completed", st.Status)
		}
		if took > 20*time.Second {
			t.Errorf("the stop took %v, longer than its shutdown timeout", took)
		}
	})
}

// Graceful shutdown: a turn still waiting on the model when the shutdown
// timeout ends is cancelled, and its run is handed back at once: the next
// worker process takes it and the conversation gets its answer without
// waiting for the run's lease (a minute) to expire.
func TestATurnRunningPastTheShutdownTimeoutIsTakenByTheNextProcessWithoutWaitingForItsLease(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		ctx := t.Context()
		api := wt.New(t, db, wt.TourSite, &wt.Options{APIOnly: true})
		w := startWorker(t, another(), 300*time.Millisecond)
		arrived, hold := make(chan struct{}), make(chan struct{})
		t.Cleanup(func() { close(hold) })
		api.LLM.Add(llmtest.Reply{Content: "zu spät", Arrived: arrived, Hold: hold})
		erika := api.As(wt.Erika)
		id := conversation(t, api, erika, arrived)
		var turn string
		if err := db.QueryRow(ctx, "SELECT pending_run_uuid FROM conversations WHERE id = ?", id).Scan(&turn); err != nil || turn == "" {
			t.Fatalf("the turn's run = %q, %v", turn, err)
		}

		began := time.Now()
		w.stop() // SIGTERM; the model never answers this worker
		select {
		case <-w.done:
			if w.err != nil {
				t.Fatalf("the stop = %v, want nil", w.err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the stop did not return within 20s")
		}
		stopped := time.Since(began)
		var status, owner string
		if err := db.QueryRow(ctx, "SELECT status, lease_owner FROM runs WHERE uuid = ?", turn).Scan(&status, &owner); err != nil {
			t.Fatal(err)
		}
		if status != "queued" || owner != "" {
			t.Fatalf("the turn's run once the worker stopped: %s held by %q, want queued for another worker", status, owner)
		}

		api.LLM.Add(llmtest.Reply{Content: "Wieder da."})
		startWorker(t, another(), 20*time.Second)
		conv := until(t, erika, id, 20*time.Second)
		waited := time.Since(began)
		last := conv.Messages[len(conv.Messages)-1]
		if conv.Status != "idle" || last.Content != "Wieder da." {
			t.Fatalf("after the restart: status %s, last message %+v (error %q); want idle with the next worker's answer", conv.Status, last, conv.Error)
		}
		if waited >= agent.DefaultLease/2 {
			t.Errorf("the answer came %v after the stop, want well within the lease (%v)", waited, agent.DefaultLease)
		}
		for _, m := range conv.Messages {
			if m.Role == "assistant" && m.Content == "" && m.Notice == "" {
				t.Errorf("an empty assistant message: %+v", conv.Messages)
			}
		}
		t.Logf("stop took %v; the answer came %v after the stop began", stopped.Round(time.Millisecond), waited.Round(time.Millisecond))
	})
}
