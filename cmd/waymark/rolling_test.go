package main

import (
	"sync/atomic"
	"testing"
	"time"

	"waymark/internal/bench"
	"waymark/internal/store/storetest"
)

// A rolling restart on PostgreSQL: two API processes behind a balancer and
// two worker processes, conversations answering cards all along, and every
// process restarted one after the other with SIGTERM, twice. Each process
// exits by itself within its shutdown timeout; no answer is lost, no
// assistant message is empty, no conversation is left processing, every
// invariant of the load proof holds, and no conversation is busy — an
// answer would be refused 409 — for longer than the shutdown timeout.
// (Regression: SIGTERM cancelled the running chat jobs; their
// conversations answered busy for a lease and then ended with an empty
// assistant message.) The default lease (a minute) is kept, so a turn that
// waited for one would show.
func TestARollingRestartOfEveryProcessLosesNoAnswer(t *testing.T) {
	// Ten seconds: on the loaded 2-core machine an answer waits seconds
	// behind the others' turns even without restarts (p99 4.4 s at 20
	// conversations), and a turn that waited for a lease would take 60.
	n, rounds, shutdown := 20, 2, 10*time.Second
	if proofFull() {
		n = 200
	}
	start := time.Now()
	ctx := t.Context()
	c, err := bench.Start(ctx, bench.Config{DB: storetest.PostgresURL(t), APIProcesses: 2, WorkerProcesses: 2,
		Conversations: n, Duration: time.Minute, ShutdownTimeout: shutdown, Exe: benchExe, Env: benchEnv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)

	var answers atomic.Int64
	stop := make(chan struct{})
	done := make(chan bench.Result, 1)
	go func() {
		done <- c.Drive(ctx, 30*time.Minute, bench.Mix{Stop: stop, Settle: 5 * time.Minute, OnAnswer: func(string) { answers.Add(1) }})
	}()
	// Between two restarts the conversations answer some cards, so that
	// every SIGTERM finds turns and decisions under way.
	between := func() {
		want := answers.Load() + int64(max(n/2, 10))
		for deadline := time.Now().Add(time.Minute); answers.Load() < want && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond) // polling a condition, not a synchronisation
		}
	}
	limit := shutdown + 10*time.Second // the stop's own time on top of the jobs'
	restarts, slowestStop := 0, time.Duration(0)
	for round := range rounds {
		for i := range 2 {
			between()
			if err := c.RestartServer(ctx, i, limit); err != nil {
				t.Fatalf("round %d, server %d: %v", round+1, i, err)
			}
			restarts++
		}
		for i := range 2 {
			between()
			t0 := time.Now()
			if err := c.TerminateWorker(i, limit); err != nil {
				t.Fatalf("round %d, worker %d: %v", round+1, i, err)
			}
			slowestStop = max(slowestStop, time.Since(t0))
			if err := c.RestartWorker(ctx, i); err != nil {
				t.Fatalf("round %d, restart worker %d: %v", round+1, i, err)
			}
			restarts++
		}
	}
	between()
	close(stop)
	res := <-done
	if res.Err != nil || res.Failed > 0 || res.Unfinished > 0 || res.FailedConversations > 0 {
		describeStuck(t, c.DB)
		describeConversation(t, c, res.Err)
		t.Fatalf("%d tours failed, %d unfinished, %d conversations failed; the first failure: %v", res.Failed, res.Unfinished, res.FailedConversations, res.Err)
	}
	quiesce(t, c, 2*time.Minute)
	wantInvariants(t, c.DB)

	// Every accepted answer was carried out: its card has an outcome.
	got := outcomes(t, c.DB)
	recorded := 0
	for _, k := range got {
		recorded += k
	}
	if recorded != res.Answers {
		t.Errorf("%d answers accepted, %d outcomes recorded (%v): answers were lost", res.Answers, recorded, got)
	}
	var empty, processing int
	if err := c.DB.QueryRow(ctx, "SELECT COUNT(*) FROM conversation_messages WHERE role = 'assistant' AND content = '' AND notice = ''").Scan(&empty); err != nil {
		t.Fatal(err)
	}
	if err := c.DB.QueryRow(ctx, "SELECT COUNT(*) FROM conversations WHERE status = 'processing'").Scan(&processing); err != nil {
		t.Fatal(err)
	}
	if empty > 0 || processing > 0 {
		t.Errorf("%d empty assistant messages, %d conversations stuck processing; want none", empty, processing)
	}
	// The longest an answered card's conversation stayed processing: as
	// long, a new answer or message would have been refused as busy.
	busiest := time.Duration(0)
	if len(res.Latencies) > 0 {
		busiest = res.Latencies[len(res.Latencies)-1]
	}
	if busiest > shutdown {
		t.Errorf("a conversation stayed busy %v after an answer, longer than the shutdown timeout %v", busiest, shutdown)
	}
	if res.Answers == 0 || restarts != 4*rounds {
		t.Errorf("the proof did not do everything: %d answers, %d restarts", res.Answers, restarts)
	}
	t.Logf("%d conversations, %d restarts (2 serve + 2 worker, %d rounds, SIGTERM, shutdown timeout %v; slowest worker exit %v): %d tours, %d answers, outcomes %v; max busy window %v, p50/p99 answer %v/%v; %v in all",
		n, restarts, rounds, shutdown, slowestStop.Round(time.Millisecond), res.Tours, res.Answers, got, busiest.Round(time.Millisecond),
		pct(res.Latencies, 0.5), pct(res.Latencies, 0.99), time.Since(start).Round(time.Second))
}
