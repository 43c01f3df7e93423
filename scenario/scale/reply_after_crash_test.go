package scale_test

import (
	"net/http"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/clock"
	"waymark/internal/invariant"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// The crash proof (kill -9, 172 tours): a worker that died while it
// continued a turn after a card answer — the decided card held by the
// conversation, the write done, the model's reply not yet in — had its run
// requeued and finished on another worker, but the conversation settled a
// lease later with an empty assistant message instead of the model's
// reply: the finishing worker did not hand a result over while a decided
// card was held, and the run keeps no answer below privacy full. The reply
// is kept with the run's end, and the worker that finishes the run hands it
// over; a recovery that comes first settles the turn with the kept reply,
// and the late hand-over then changes nothing — in both orders the turn ends
// with the model's reply, once, and the card's outcome is recorded once.
func TestAnAcceptedAnswerWhoseWorkerDiedInTheContinuationEndsWithTheModelsReply(t *testing.T) {
	for _, order := range []string{"finishing worker first", "recovery first"} {
		t.Run(order, func(t *testing.T) {
			storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
				ctx := t.Context()
				clk := clock.NewFake(time.Now())
				api := wt.New(t, db, site, &wt.Options{APIOnly: true, Clock: clk})
				// The heartbeat of the dying worker never beats within the test.
				dying := wt.New(t, another(), "", &wt.Options{ChatWorkers: 1, Clock: clk, Heartbeat: agent.DefaultLease - time.Millisecond})
				erika := api.As(wt.Erika)
				api.LLM.Add(write("c1", `{"description": "Neu"}`))
				id := start(t, erika)
				conv := send(t, dying, erika, id, "Los")
				if conv.Status != "awaiting_approval" || conv.Card == nil {
					t.Fatalf("after the message: %+v", conv)
				}
				// The answer's continuation writes, then its model call hangs:
				// the worker is gone for the installation from here on.
				arrived, hold := make(chan struct{}), make(chan struct{})
				api.LLM.Add(llmtest.Reply{Content: "zu spät", Arrived: arrived, Hold: hold})
				t.Cleanup(func() {
					select {
					case <-hold:
					default:
						close(hold)
					}
				})
				erika.Must("POST", path(id, "/answer"), map[string]any{"turnDigest": conv.Card.TurnDigest, "answer": "apply"}, http.StatusAccepted)
				select {
				case <-arrived:
				case <-time.After(20 * time.Second):
					t.Fatal("the continuation did not call the model within 20s")
				}
				var runUUID string
				if err := db.QueryRow(ctx, "SELECT pending_run_uuid FROM conversations WHERE id = ?", id).Scan(&runUUID); err != nil {
					t.Fatal(err)
				}
				if c := read(t, erika, id); c.Status != "processing" {
					t.Fatalf("during the continuation: %+v", c)
				}

				// The finishing worker: in "recovery first" it stops right
				// after the run's end, before it hands the result over.
				entered, release := make(chan struct{}), make(chan struct{})
				opts := &wt.Options{Workers: 1, ChatWorkers: 1, Clock: clk}
				if order == "recovery first" {
					opts.BeforeClaim = func(op string) {
						if op == "result" {
							close(entered)
							<-release
						}
					}
				}
				survivor := wt.New(t, another(), "", opts)
				api.LLM.Add(answer("Erledigt."))
				clk.Advance(agent.DefaultLease + time.Second)
				rep, err := survivor.App.Runtime.Reap(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if rep.Requeued != 1 {
					t.Fatalf("the reaper after one lease = %+v, want the continuation requeued", rep)
				}

				switch order {
				case "finishing worker first":
					conv = untilSettled(t, erika, id) // no lease later: the finishing worker hands it over
					wantReply(t, conv, "Erledigt.")
					clk.Advance(2 * agent.DefaultLease) // the recovery then finds nothing to do
					if _, err := api.App.Chat.Reap(ctx); err != nil {
						t.Fatal(err)
					}
				case "recovery first":
					select {
					case <-entered:
					case <-time.After(20 * time.Second):
						t.Fatal("the finishing worker did not reach the hand-over within 20s")
					}
					if st := erika.MustRun(runUUID); st.Status != "completed" {
						t.Fatalf("the continued run = %v, want completed", st.Status)
					}
					clk.Advance(2 * agent.DefaultLease)
					if _, err := api.App.Chat.Reap(ctx); err != nil {
						t.Fatal(err)
					}
					conv = read(t, erika, id)
					wantReply(t, conv, "Erledigt.")
					close(release) // the late hand-over
					untilRunJobsDone(t, db)
				}
				after := read(t, erika, id)
				wantReply(t, after, "Erledigt.")
				if len(after.Messages) != len(conv.Messages) {
					t.Errorf("the transcript grew from %d to %d messages after the turn was settled: %+v", len(conv.Messages), len(after.Messages), after.Messages)
				}
				// The dying worker comes back: its late result changes nothing.
				close(hold)
				dying.App.Chat.Wait()
				late := read(t, erika, id)
				wantReply(t, late, "Erledigt.")
				if len(late.Messages) != len(conv.Messages) {
					t.Errorf("the late result changed the transcript: %+v", late.Messages)
				}
				if o := late.Outcomes; len(o) != 1 || o[0].Outcome != "applied" {
					t.Errorf("outcomes = %+v, want one applied change", late.Outcomes)
				}
				if n := count(t, db, "SELECT COUNT(*) FROM record_history WHERE field = 'description'"); n != 1 {
					t.Errorf("the description was written %d times, want once", n)
				}
				if n := count(t, db, "SELECT COUNT(*) FROM conversation_replies"); n != 0 {
					t.Errorf("%d replies left kept after the turn was settled, want 0", n)
				}
				expect(t, "after the continued turn", invariant.New(db, &invariant.Config{Clock: clk}))
			})
		})
	}
}

// wantReply fails unless conv is idle and its transcript ends with reply,
// with no empty assistant message anywhere.
func wantReply(t *testing.T, conv wt.Conversation, reply string) {
	t.Helper()
	msgs := conv.Messages
	if conv.Status != "idle" || len(msgs) == 0 || msgs[len(msgs)-1].Content != reply {
		t.Fatalf("conversation = %v, transcript %+v; want idle ending with the model's reply %q", conv.Status, msgs, reply)
	}
	for _, m := range msgs {
		if m.Role == "assistant" && m.Content == "" && m.Notice == "" {
			t.Errorf("an empty assistant message in the transcript: %+v", msgs)
		}
	}
}

// untilRunJobsDone waits (at most 20 s) until no run job of db is left
// unfinished: the segment a worker ran has handed its result over.
func untilRunJobsDone(t *testing.T, db *store.DB) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		n := count(t, db, "SELECT COUNT(*) FROM river_job WHERE kind = 'waymark_run' AND state NOT IN ('completed', 'cancelled', 'discarded')")
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d run jobs unfinished after 20s", n)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not a synchronisation
	}
}
