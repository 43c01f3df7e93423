package scale_test

import (
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// With the API started as `serve --workers 0` and a
// separate worker application on the same database, a whole guided tour —
// message, card, apply, closing answer — runs: the API only records the
// message or decision and its job; the worker runs every turn and resume.
// On PostgreSQL the worker is woken by the insert (River's pgx listener):
// it polls only once an hour here, and the tour still runs.
func TestChatTourRunsOnAWorkerProcessWhileTheAPIHasNoWorkers(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		api := wt.New(t, db, site, &wt.Options{APIOnly: true})
		opts := &wt.Options{Workers: 1, ChatWorkers: 2}
		if db.Dialect() == store.Postgres {
			opts.PollInterval = time.Hour
		}
		worker := wt.New(t, another(), "", opts)
		if db.Dialect() == store.Postgres && !worker.App.Queue.Listening {
			t.Fatal("the PostgreSQL worker does not listen for inserts")
		}
		if api.App.Queue.Listening {
			t.Error("the API without workers opened a listener")
		}
		api.LLM.Add(write("c1", `{"description": "Neu"}`), completion(), answer("Fertig."))
		erika := api.As(wt.Erika)
		id := start(t, erika)
		conv := send(t, api, erika, id, "Los")
		if conv.Status != "awaiting_approval" {
			t.Fatalf("after the message: %+v", conv)
		}
		conv = decide(t, api, erika, conv, "apply")
		if conv.Status != "idle" || conv.Error != "" { // error is omitempty: absent and "" are one
			t.Fatalf("after apply: status %v error %v", conv.Status, conv.Error)
		}
		msgs := conv.Messages
		if last := msgs[len(msgs)-1]; last.Content != "Fertig." {
			t.Errorf("closing message = %+v", last)
		}
		if sum := conv.Summary; sum == nil || sum.Applied != 1 {
			t.Errorf("summary = %+v", conv.Summary)
		}
		if n := modelCalls(t, api); n != 0 {
			t.Errorf("the API process made %d model calls, want 0", n)
		}
		if n := modelCalls(t, worker); n != 3 {
			t.Errorf("the worker process made %d model calls, want 3", n)
		}
		if n := api.LLM.Remaining(); n != 0 {
			t.Errorf("%d scripted model replies left, want 0", n)
		}
	})
}

// modelCalls is how many model calls e's process made, as its
// waymark_provider_call_seconds metric counts them.
func modelCalls(t *testing.T, e *wt.Env) uint64 {
	t.Helper()
	families, err := e.App.Server.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, f := range families {
		if f.GetName() != "waymark_provider_call_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return n
}

// gauge is the value of the unlabelled gauge name in e's metrics.
func gauge(t *testing.T, e *wt.Env, name string) float64 {
	t.Helper()
	families, err := e.App.Server.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}
