package scale_test

import (
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/clock"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// A worker judged dead that comes back while its requeued turn runs again on
// a survivor does not fail the conversation: the run it finds is running
// (not settled), so the conversation stays processing and takes the
// survivor's answer. (The crash proof found conversations failed with the
// error "running": the late segment's result was applied as the run's end.)
func TestAStoppedWorkerBackWhileItsTurnRunsAgainLeavesTheConversationToTheSurvivor(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		clk := clock.NewFake(time.Now())
		api := wt.New(t, db, site, &wt.Options{APIOnly: true, Clock: clk})
		// The heartbeat of the stopped worker never beats within the test.
		stopped := wt.New(t, another(), "", &wt.Options{ChatWorkers: 1, Clock: clk, Heartbeat: agent.DefaultLease - time.Millisecond})
		arrived, hold := make(chan struct{}), make(chan struct{})
		api.LLM.Add(llmtest.Reply{Content: "zu spät", Arrived: arrived, Hold: hold})
		erika := api.As(wt.Erika)
		id := start(t, erika)
		if r := erika.SendMessage(id, "Los"); r.Status != 202 {
			t.Fatalf("POST message = %d %s", r.Status, r.Body)
		}
		within := func(ch chan struct{}, what string) {
			t.Helper()
			select {
			case <-ch:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s did not call the model within 20s", what)
			}
		}
		within(arrived, "the first worker")
		again, holdAgain := make(chan struct{}), make(chan struct{})
		released := func(ch chan struct{}) {
			select {
			case <-ch:
			default:
				close(ch)
			}
		}
		t.Cleanup(func() { released(hold); released(holdAgain) })
		survivor := wt.New(t, another(), "", &wt.Options{Workers: 1, ChatWorkers: 1, Clock: clk})
		api.LLM.Add(llmtest.Reply{Content: "Wieder da.", Arrived: again, Hold: holdAgain})
		clk.Advance(61 * time.Second) // the default lease and a second
		rep, err := survivor.App.Runtime.Reap(t.Context())
		if err != nil || rep.Requeued != 1 {
			t.Fatalf("the reaper after one lease = %+v, %v; want the turn requeued", rep, err)
		}
		within(again, "the survivor")

		// The stopped worker comes back while the survivor runs the turn.
		released(hold)
		stopped.App.Chat.Wait()
		if c := read(t, erika, id); c.Status != "processing" || c.Error != "" {
			t.Fatalf("after the late segment, while the turn runs again = status %v error %q, want processing", c.Status, c.Error)
		}
		released(holdAgain)
		c := untilSettled(t, erika, id)
		if c.Status != "idle" || c.Error != "" {
			t.Fatalf("once the survivor ran the turn: %+v", c)
		}
		if n := said(c, "assistant", "Wieder da."); n != 1 || said(c, "assistant", "zu spät") != 0 {
			t.Errorf("the transcript = %+v, want the survivor's answer once and not the late one", c.Messages)
		}
	})
}
