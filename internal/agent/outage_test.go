package agent_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/llm"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// A run whose provider cannot be built because the database does not answer
// (the provider's API key is read from it) is handed back — its lease ended,
// requeued — and runs once the database answers again; it does not fail.
// Before, the outage ended the run failed not_retryable
// (provider_configuration), and its conversation with it.
func TestARunWhoseProviderLookupMeetsADatabaseOutageIsHandedBackNotFailed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		var lookups atomic.Int64
		real := e.providers
		e.providers = func(ctx context.Context, cfg llmconfig.Configuration) (llm.Provider, error) {
			if lookups.Add(1) == 1 {
				return nil, fmt.Errorf("read API key of configuration %d: %w", cfg.UID, refused)
			}
			return real(ctx, cfg)
		}
		e.withQueue(t, 0)
		id, err := e.rt.Enqueue(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.rt.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		r, err := e.runs.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != run.StatusRunning || !r.LeaseExpiresAt.Before(e.clk.Now().Add(time.Millisecond)) {
			t.Fatalf("after the outage: run %s/%s/%s lease until %v (now %v), want running with its lease ended",
				r.Status, r.Reason, r.ErrorClass, r.LeaseExpiresAt, e.clk.Now())
		}
		// Its lease ended: the reaper's next pass requeues it.
		e.clk.Advance(time.Second)
		if _, err := e.rt.Reap(ctx); err != nil {
			t.Fatal(err)
		}
		if r, _ := e.runs.Get(ctx, id); r.Status != run.StatusQueued {
			t.Fatalf("after the reaper: run %s/%s/%s, want queued again", r.Status, r.Reason, r.ErrorClass)
		}
		if err := e.rt.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		if r, _ := e.runs.Get(ctx, id); r.Status != run.StatusWaitingForApproval {
			t.Fatalf("once the database answers: run %s/%s/%s, want waiting_for_approval", r.Status, r.Reason, r.ErrorClass)
		}
	})
}
