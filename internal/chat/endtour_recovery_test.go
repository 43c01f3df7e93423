package chat

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/clock"
	"waymark/internal/run"
	"waymark/internal/store"
)

// hookEnder is an Ender whose EndProcess runs hook (when set) first; it
// counts its calls.
type hookEnder struct {
	mu    sync.Mutex // guards calls and hook
	calls int
	hook  func()
}

func (e *hookEnder) EndProcess(ctx context.Context, actor int64, id string) (bool, run.Status, error) {
	e.mu.Lock()
	e.calls++
	hook := e.hook
	e.hook = nil
	e.mu.Unlock()
	if hook != nil {
		hook()
	}
	return false, run.StatusCompleted, nil // a completed tour let its process go already
}

// completedTour stores the conversation of a tour that completed: idle, its
// process skill kept, its last run completed.
func completedTour(t *testing.T, db *store.DB) int64 {
	t.Helper()
	var id int64
	if err := db.QueryRow(context.Background(), `INSERT INTO conversations (owner_uid, configuration_uid, page_uid, language, process, status,
		last_run_uuid, progress, created_at, updated_at) VALUES (2, 1, 1, 0, TRUE, 'idle', 'run-1', '{"completed":true}', 1, 1) RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if err := addMessageTx(context.Background(), db, id, Message{Role: "assistant", Content: "Fertig."}, 1); err != nil {
		t.Fatal(err)
	}
	return id
}

// wantTourEnded fails unless conversation id is idle without a process and
// its transcript ends with the one tour_ended line — no turn restarted, no
// failure.
func wantTourEnded(t *testing.T, db *store.DB, id int64) {
	t.Helper()
	ctx := context.Background()
	r, err := getRow(ctx, db, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Idle || r.Error != "" || r.Process || r.LastRun != "run-1" || r.EndingTour {
		t.Errorf("conversation = status %v, error %q, process %v, last run %q, ending %v; want idle without a process after run-1",
			r.Status, r.Error, r.Process, r.LastRun, r.EndingTour)
	}
	msgs, err := messages(ctx, db, id)
	if err != nil {
		t.Fatal(err)
	}
	ended := 0
	for _, m := range msgs {
		switch m.Notice {
		case NoticeTourEnded:
			ended++
		case "":
		default:
			t.Errorf("the transcript shows the notice %q: %+v", m.Notice, msgs)
		}
	}
	if ended != 1 || msgs[len(msgs)-1].Notice != NoticeTourEnded {
		t.Errorf("transcript = %+v, want it to end with one %s", msgs, NoticeTourEnded)
	}
}

// An end-tour whose request stops between its claim and its end — its
// process killed — leaves the conversation processing with no turn, job or
// run; the recovery a lease later carries the end out (the crash run: it
// restarted a turn that did not exist, and the completed tour ended failed
// with turn_restarted).
func TestAnEndTourKilledAfterItsClaimIsCarriedOutByTheRecovery(t *testing.T) {
	for _, recovery := range []string{"read", "reaper"} {
		t.Run(recovery, func(t *testing.T) {
			eachDB(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				id := completedTour(t, db)
				clk := clock.NewFake(time.Now())
				ender := &hookEnder{hook: runtime.Goexit} // the request's process dies in the end
				s := New(Deps{DB: db, Ender: ender}, &Config{Clock: clk})
				defer s.Close()
				done := make(chan struct{})
				go func() {
					defer close(done)
					_, _ = s.EndTour(ctx, 2, id)
					t.Error("EndTour returned; want it killed in EndProcess")
				}()
				<-done
				r, err := getRow(ctx, db, id)
				if err != nil {
					t.Fatal(err)
				}
				if r.Status != Processing || !r.EndingTour || r.Error != "" {
					t.Fatalf("after the kill: status %v, ending %v, error %q; want processing on the end-tour's claim", r.Status, r.EndingTour, r.Error)
				}
				// Within the lease the claim is left alone.
				if got, err := s.recovery.reconcile(ctx, r); err != nil || got.Status != Processing {
					t.Fatalf("a read within the lease = %v, %v; want processing", got.Status, err)
				}
				clk.Advance(agent.DefaultLease + time.Second)
				switch recovery {
				case "read":
					if _, err := s.Get(ctx, 2, id); err != nil {
						t.Fatal(err)
					}
				case "reaper":
					if n, err := s.Reap(ctx); err != nil || n != 1 {
						t.Fatalf("Reap = %d, %v; want 1", n, err)
					}
				}
				wantTourEnded(t, db, id)
				if ender.calls != 2 {
					t.Errorf("EndProcess called %d times, want 2 (the killed request's, the recovery's)", ender.calls)
				}
			})
		})
	}
}

// An end-tour and a recovery meeting on one conversation end its tour once,
// in either order: a recovery within the lease leaves a running end-tour
// alone (and a stop finds no turn to stop); a recovery after it — the
// request stalled for a lease — carries the end out, and the request's late
// end then changes nothing, not even a message claimed since.
func TestAnEndTourAndARecoveryMeetingEndTheTourOnce(t *testing.T) {
	t.Run("recovery within the lease", func(t *testing.T) {
		eachDB(t, func(t *testing.T, db *store.DB) {
			ctx := context.Background()
			id := completedTour(t, db)
			clk := clock.NewFake(time.Now())
			entered, resume := make(chan struct{}), make(chan struct{})
			ender := &hookEnder{hook: func() { close(entered); <-resume }}
			s := New(Deps{DB: db, Ender: ender}, &Config{Clock: clk})
			defer s.Close()
			ended := make(chan error, 1)
			go func() {
				_, err := s.EndTour(ctx, 2, id)
				ended <- err
			}()
			<-entered
			clk.Advance(agent.DefaultLease / 2)
			if n, err := s.Reap(ctx); err != nil || n != 0 {
				t.Errorf("Reap within the lease = %d, %v; want 0", n, err)
			}
			if v, err := s.Get(ctx, 2, id); err != nil || v.Status != Processing || v.Error != "" {
				t.Errorf("a read during the end-tour = %v %q, %v; want processing", v.Status, v.Error, err)
			}
			if _, err := s.Stop(ctx, 2, id); !errors.Is(err, ErrNotRunning) {
				t.Errorf("Stop during the end-tour = %v, want ErrNotRunning", err)
			}
			close(resume)
			if err := <-ended; err != nil {
				t.Fatalf("EndTour = %v", err)
			}
			wantTourEnded(t, db, id)
		})
	})
	t.Run("recovery after the lease", func(t *testing.T) {
		eachDB(t, func(t *testing.T, db *store.DB) {
			ctx := context.Background()
			id := completedTour(t, db)
			clk := clock.NewFake(time.Now())
			entered, resume := make(chan struct{}), make(chan struct{})
			ender := &hookEnder{hook: func() { close(entered); <-resume }}
			s := New(Deps{DB: db, Ender: ender}, &Config{Clock: clk})
			defer s.Close()
			ended := make(chan error, 1)
			go func() {
				_, err := s.EndTour(ctx, 2, id)
				ended <- err
			}()
			<-entered
			clk.Advance(agent.DefaultLease + time.Second)
			if n, err := s.Reap(ctx); err != nil || n != 1 {
				t.Fatalf("Reap after the lease = %d, %v; want 1", n, err)
			}
			wantTourEnded(t, db, id)
			// The editor's next message claims the conversation before the
			// stalled request goes on.
			clk.Advance(time.Second)
			claimAt := clk.Now().UnixMicro()
			if _, err := db.Exec(ctx, "UPDATE conversations SET status = 'processing', updated_at = ? WHERE id = ? AND status = 'idle'", claimAt, id); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Second)
			close(resume)
			if err := <-ended; err != nil {
				t.Fatalf("EndTour = %v", err)
			}
			r, err := getRow(ctx, db, id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != Processing || r.UpdatedAt.UnixMicro() != claimAt || r.EndingTour {
				t.Errorf("after the late end: status %v at %d, ending %v; want the message's claim (processing at %d) untouched",
					r.Status, r.UpdatedAt.UnixMicro(), r.EndingTour, claimAt)
			}
			msgs, err := messages(ctx, db, id)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, m := range msgs {
				if m.Notice == NoticeTourEnded {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d tour_ended lines, want 1: %+v", n, msgs)
			}
		})
	})
}
