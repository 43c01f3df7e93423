package run_test

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

type transition struct {
	name string
	do   func(b bundle, id string) (bool, error)
	from []run.Status // the statuses it wins from
	to   run.Status   // the status after a win
}

func transitions() []transition {
	const other = "worker:b"
	state := []byte(`{"pending":["call_2"]}`)
	return []transition{
		{"Claim", func(b bundle, id string) (bool, error) { return b.store.Claim(b.ctx, id, other, lease) },
			[]run.Status{run.StatusQueued}, run.StatusRunning},
		{"Renew", func(b bundle, id string) (bool, error) {
			return b.store.Renew(b.ctx, id, run.Renewal{Owner: owner, Lease: lease})
		},
			[]run.Status{run.StatusRunning}, run.StatusRunning},
		{"Suspend", func(b bundle, id string) (bool, error) {
			return b.store.Suspend(b.ctx, id, run.Suspension{Owner: owner, To: run.StatusWaitingForInput, State: state})
		}, []run.Status{run.StatusRunning}, run.StatusWaitingForInput},
		{"ResumeApproval", func(b bundle, id string) (bool, error) {
			return b.store.Resume(b.ctx, id, run.Resumption{From: run.StatusWaitingForApproval, Owner: other, Lease: lease})
		}, []run.Status{run.StatusWaitingForApproval}, run.StatusRunning},
		{"ResumeInput", func(b bundle, id string) (bool, error) {
			return b.store.Resume(b.ctx, id, run.Resumption{From: run.StatusWaitingForInput, Owner: other, Lease: lease})
		}, []run.Status{run.StatusWaitingForInput}, run.StatusRunning},
		{"SettleOwned", func(b bundle, id string) (bool, error) {
			return b.store.Settle(b.ctx, id, run.Settlement{Owner: owner, Status: run.StatusCompleted, Reason: run.ReasonCompleted})
		}, []run.Status{run.StatusRunning}, run.StatusCompleted},
		{"SettleUnowned", func(b bundle, id string) (bool, error) {
			return b.store.Settle(b.ctx, id, run.Settlement{Status: run.StatusFailed, Reason: run.ReasonPolicyDenied, ErrClass: "process_invocation_refused"})
		}, []run.Status{run.StatusQueued, run.StatusWaitingForApproval, run.StatusWaitingForInput}, run.StatusFailed},
		{"Cancel", func(b bundle, id string) (bool, error) { return b.store.Cancel(b.ctx, id) },
			[]run.Status{run.StatusQueued, run.StatusRunning, run.StatusWaitingForApproval, run.StatusWaitingForInput}, run.StatusCancelled},
		{"CancelIfWaiting", func(b bundle, id string) (bool, error) { return b.store.CancelIfWaiting(b.ctx, id) },
			[]run.Status{run.StatusWaitingForApproval, run.StatusWaitingForInput}, run.StatusCancelled},
		{"SetFence", func(b bundle, id string) (bool, error) {
			return b.store.SetFence(b.ctx, id, owner, []byte(`{"call":"call_1","effect":"non_idempotent_write"}`))
		}, []run.Status{run.StatusRunning}, run.StatusRunning},
		{"ClearFence", func(b bundle, id string) (bool, error) { return b.store.ClearFence(b.ctx, id, owner) },
			[]run.Status{run.StatusRunning}, run.StatusRunning},
		{"Requeue", func(b bundle, id string) (bool, error) {
			return b.store.Requeue(b.ctx, id, run.Requeuing{Owner: owner, Requeues: 0})
		},
			[]run.Status{run.StatusRunning}, run.StatusQueued},
		{"AddUsage", func(b bundle, id string) (bool, error) {
			return b.store.AddUsage(b.ctx, id, owner, run.Usage{PromptTokens: 10, CompletionTokens: 5, Iterations: 1})
		}, []run.Status{run.StatusRunning}, run.StatusRunning},
	}
}

func TestEachTransitionWinsOnlyFromItsSources(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		for _, tr := range transitions() {
			for _, st := range run.Statuses() {
				id := b.in(t, st)
				before := b.get(t, id)
				b.clk.Advance(time.Second)
				won, err := tr.do(b, id)
				if err != nil {
					t.Fatalf("%s from %s: %v", tr.name, st, err)
				}
				want := false
				for _, f := range tr.from {
					want = want || f == st
				}
				after := b.get(t, id)
				if won != want {
					t.Errorf("%s from %s won = %v, want %v", tr.name, st, won, want)
				}
				switch {
				case !won && !reflect.DeepEqual(after, before):
					t.Errorf("%s from %s lost but changed the row:\n%+v\nto\n%+v", tr.name, st, before, after)
				case won && after.Status != tr.to:
					t.Errorf("%s from %s: status %s, want %s", tr.name, st, after.Status, tr.to)
				case won && !after.UpdatedAt.Equal(b.clk.Now()):
					t.Errorf("%s from %s: updated_at %v, want the clock's %v", tr.name, st, after.UpdatedAt, b.clk.Now())
				}
				if won {
					if again, err := tr.do(b, id); err == nil && again && tr.to != st {
						t.Errorf("%s from %s won a second time", tr.name, st)
					}
				}
			}
		}
	})
}

func TestTerminalRunsNeverChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		for _, st := range []run.Status{run.StatusCompleted, run.StatusFailed, run.StatusCancelled} {
			id := b.in(t, st)
			before := b.get(t, id)
			for _, tr := range transitions() {
				if won, err := tr.do(b, id); won || err != nil {
					t.Errorf("%s on %s = %v, %v; want a loss", tr.name, st, won, err)
				}
			}
			for _, o := range []string{owner, ""} {
				if won, err := b.store.RequeueExpired(b.ctx, id, run.Requeuing{Owner: o + "x", Requeues: 0}); won || err != nil {
					t.Errorf("RequeueExpired on %s = %v, %v", st, won, err)
				}
			}
			if after := b.get(t, id); !reflect.DeepEqual(after, before) {
				t.Errorf("terminal %s run changed:\n%+v\nto\n%+v", st, before, after)
			}
		}
	})
}

func TestSettleRecordsTheEndAndClearsResumableState(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		b.clk.Advance(time.Minute)
		won, err := b.store.Settle(b.ctx, id, run.Settlement{Owner: owner, Status: run.StatusFailed, Reason: run.ReasonNotRetryable, ErrClass: "provider_error", ErrMsg: "bad key", Answer: "partial"})
		if err != nil || !won {
			t.Fatalf("Settle = %v, %v", won, err)
		}
		r := b.get(t, id)
		if r.Status != run.StatusFailed || r.Reason != run.ReasonNotRetryable || r.ErrorClass != "provider_error" ||
			r.ErrorMessage != "bad key" || r.Answer != "partial" {
			t.Errorf("settled run = %+v", r)
		}
		if !r.FinishedAt.Equal(t0.Add(time.Minute)) || r.LeaseOwner != "" || !r.LeaseExpiresAt.IsZero() ||
			r.Request != nil || r.Suspended != nil {
			t.Errorf("settled run keeps lease or state: finished %v owner %q expiry %v request %s suspended %s",
				r.FinishedAt, r.LeaseOwner, r.LeaseExpiresAt, r.Request, r.Suspended)
		}
		if won, _ := b.store.Settle(b.ctx, id, run.Settlement{Owner: owner, Status: run.StatusCompleted, Reason: run.ReasonCompleted}); won {
			t.Error("a late second settle won")
		}
	})
}

func TestBadTransitionInputIsRefusedAndChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		before := b.get(t, id)
		calls := map[string]func() (bool, error){
			"Settle non-terminal": func() (bool, error) {
				return b.store.Settle(b.ctx, id, run.Settlement{Owner: owner, Status: run.StatusWaitingForInput, Reason: run.ReasonCompleted})
			},
			"Settle unknown reason": func() (bool, error) {
				return b.store.Settle(b.ctx, id, run.Settlement{Owner: owner, Status: run.StatusFailed, Reason: "oops"})
			},
			"Suspend to running": func() (bool, error) {
				return b.store.Suspend(b.ctx, id, run.Suspension{Owner: owner, To: run.StatusRunning, State: []byte(`{}`)})
			},
			"Suspend without state": func() (bool, error) {
				return b.store.Suspend(b.ctx, id, run.Suspension{Owner: owner, To: run.StatusWaitingForApproval, State: nil})
			},
			"Renew without owner": func() (bool, error) { return b.store.Renew(b.ctx, id, run.Renewal{Owner: "", Lease: lease}) },
			"Renew zero lease":    func() (bool, error) { return b.store.Renew(b.ctx, id, run.Renewal{Owner: owner, Lease: 0}) },
			"SetFence not JSON":   func() (bool, error) { return b.store.SetFence(b.ctx, id, owner, []byte("write")) },
			"AddUsage negative": func() (bool, error) {
				return b.store.AddUsage(b.ctx, id, owner, run.Usage{PromptTokens: -1})
			},
			"Resume from queued": func() (bool, error) {
				return b.store.Resume(b.ctx, id, run.Resumption{From: run.StatusQueued, Owner: owner, Lease: lease})
			},
		}
		for name, call := range calls {
			if won, err := call(); won || !errors.Is(err, run.ErrInvalid) {
				t.Errorf("%s = %v, %v; want ErrInvalid", name, won, err)
			}
		}
		if after := b.get(t, id); !reflect.DeepEqual(after, before) {
			t.Errorf("refused calls changed the run:\n%+v\nto\n%+v", before, after)
		}
	})
}

func TestWrongOwnerLoses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		before := b.get(t, id)
		const zombie = "worker:zombie"
		calls := map[string]func() (bool, error){
			"Renew": func() (bool, error) { return b.store.Renew(b.ctx, id, run.Renewal{Owner: zombie, Lease: lease}) },
			"Suspend": func() (bool, error) {
				return b.store.Suspend(b.ctx, id, run.Suspension{Owner: zombie, To: run.StatusWaitingForApproval, State: []byte(`{}`)})
			},
			"Settle": func() (bool, error) {
				return b.store.Settle(b.ctx, id, run.Settlement{Owner: zombie, Status: run.StatusCompleted, Reason: run.ReasonCompleted})
			},
			"Unowned": func() (bool, error) {
				return b.store.Settle(b.ctx, id, run.Settlement{Status: run.StatusFailed, Reason: run.ReasonPolicyDenied})
			},
			"SetFence": func() (bool, error) { return b.store.SetFence(b.ctx, id, zombie, []byte(`{}`)) },
			"Requeue":  func() (bool, error) { return b.store.Requeue(b.ctx, id, run.Requeuing{Owner: zombie, Requeues: 0}) },
			"AddUsage": func() (bool, error) { return b.store.AddUsage(b.ctx, id, zombie, run.Usage{Iterations: 1}) },
		}
		for name, call := range calls {
			if won, err := call(); won || err != nil {
				t.Errorf("%s by a wrong owner = %v, %v; want a loss", name, won, err)
			}
		}
		if won, _ := b.store.Requeue(b.ctx, id, run.Requeuing{Owner: owner, Requeues: 1}); won {
			t.Error("Requeue with a stale requeue count won")
		}
		if after := b.get(t, id); !reflect.DeepEqual(after, before) {
			t.Errorf("wrong owner changed the run:\n%+v\nto\n%+v", before, after)
		}
	})
}

func TestCancelWinsOverALateSuspend(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		if won, err := b.store.Cancel(b.ctx, id); err != nil || !won {
			t.Fatalf("Cancel = %v, %v", won, err)
		}
		won, err := b.store.Suspend(b.ctx, id, run.Suspension{Owner: owner, To: run.StatusWaitingForApproval, State: []byte(`{"pending":["call_1"]}`)})
		if err != nil || won {
			t.Fatalf("late Suspend = %v, %v; want a loss", won, err)
		}
		r := b.get(t, id)
		if r.Status != run.StatusCancelled || r.Reason != run.ReasonCancelled || r.Suspended != nil || r.FinishedAt.IsZero() {
			t.Errorf("run after cancel and late suspend = %+v", r)
		}
	})
}

func TestConcurrentClaimsHaveOneWinner(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.queued(t)
		const n = 8
		var (
			wg     sync.WaitGroup
			start  = make(chan struct{})
			mu     sync.Mutex // guards winners and errs
			winner []string
			errs   []error
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				me := "worker:" + string(rune('a'+i))
				<-start
				won, err := b.store.Claim(b.ctx, id, me, lease)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				}
				if won {
					winner = append(winner, me)
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(errs) > 0 || len(winner) != 1 {
			t.Fatalf("claims: winners %v, errors %v; want exactly one winner", winner, errs)
		}
		if r := b.get(t, id); r.LeaseOwner != winner[0] || r.Status != run.StatusRunning {
			t.Errorf("stored lease owner %q status %s, want %q running", r.LeaseOwner, r.Status, winner[0])
		}
	})
}

// A guarded transition carries the segment's buffered events and usage: a
// won transition stores them with the next sequences in the same commit, a
// lost one stores nothing and leaves the counters alone.
func TestATransitionCommitsItsFlushOnlyWhenItWins(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		f := run.Flush{Events: []run.NewEvent{{Kind: run.EventLLM, Payload: map[string]any{"content": "secret", "toolCallCount": 1}},
			{Kind: run.EventStatus, Payload: map[string]any{"status": run.StatusWaitingForApproval}}},
			Usage: run.Usage{PromptTokens: 5, CompletionTokens: 2, Iterations: 1}, Privacy: run.PrivacyMetadata}
		var won bool
		err := db.InTx(b.ctx, func(tx *store.Tx) error {
			var err error
			won, err = b.store.SuspendTx(b.ctx, tx, id, run.Suspension{Owner: owner, To: run.StatusWaitingForApproval, State: []byte(`{}`)}, f)
			return err
		})
		if err != nil || !won {
			t.Fatalf("SuspendTx = %v, %v", won, err)
		}
		evs, err := b.store.Events(b.ctx, id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2 || evs[0].Kind != run.EventLLM || evs[1].Kind != run.EventStatus || evs[1].Sequence != evs[0].Sequence+1 {
			t.Fatalf("events = %+v", evs)
		}
		if got := b.rawPayloads(t, id)[0]; strings.Contains(got, "secret") {
			t.Errorf("metadata flush stored content: %s", got)
		}
		r := b.get(t, id)
		if r.Usage != f.Usage {
			t.Errorf("usage = %+v, want %+v", r.Usage, f.Usage)
		}
		// The run waits now: a renewal by the old owner loses and stores nothing.
		err = db.InTx(b.ctx, func(tx *store.Tx) error {
			var err error
			won, err = b.store.RenewTx(b.ctx, tx, id, run.Renewal{Owner: owner, Lease: lease}, f)
			return err
		})
		if err != nil || won {
			t.Fatalf("RenewTx on a waiting run = %v, %v", won, err)
		}
		if after, _ := b.store.Events(b.ctx, id, 0, 0); len(after) != 2 {
			t.Errorf("a lost transition stored events: %d", len(after))
		}
		if r2 := b.get(t, id); r2.Usage != f.Usage {
			t.Errorf("a lost transition added usage: %+v", r2.Usage)
		}
	})
}

func TestAFlushWithNegativeUsageIsRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		err := db.InTx(b.ctx, func(tx *store.Tx) error {
			_, err := b.store.RenewTx(b.ctx, tx, id, run.Renewal{Owner: owner, Lease: lease}, run.Flush{Usage: run.Usage{PromptTokens: -1}})
			return err
		})
		if !errors.Is(err, run.ErrInvalid) {
			t.Fatalf("err = %v, want ErrInvalid", err)
		}
	})
}
