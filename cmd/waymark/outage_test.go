//go:build !race

// The outage proof measures how long a conversation stays busy against the
// outage and one lease; the race detector slows every process of it many
// times over, so it runs in the suite without the detector (.ci/run).

package main

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waymark/internal/bench"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// outageLease is the --lease of the outage proof's processes, as in the
// restart that found the defects: 20 s.
const outageLease = 20 * time.Second

// A database outage under load: one `serve --workers 0` and two workers
// reach PostgreSQL through a proxy that the test cuts — every connection
// closed, new ones refused, as while the server restarts — for 3 s and
// later for 30 s, while conversations answer cards. No accepted answer is
// lost and none is recorded twice; a request while the database does not
// answer is 503 database_unavailable with Retry-After (which the clients
// honour), never 500; no conversation stays busy after an answer longer
// than the outages it met plus one lease and one pass of the reaper that
// recovers it; and once everything settled waymark_chat_jobs_pending reads
// 0. (Regressions: a 3 s restart used every retry within 0.1 s, the
// requests got 500 internal, conversations answered just before stayed busy
// 60–83 s, and the metric stayed at 30: the jobs of workers that gave up
// stayed running in River until its 24 h rescue. Later a card's outcome was
// now and then recorded twice: a decision the job waiting out the outage
// and its twin, handed back after the lease, both carried out was taken by
// the one the runtime refused for a decision taken elsewhere, which records
// the card again after its notice; and a turn whose provider lookup met the
// outage failed not_retryable.) The real
// server is shared by other tests and is never stopped. About 75 s.
func TestADatabaseOutageOf3sAnd30sUnderLoadLosesNoAnswerAndAnswers503(t *testing.T) {
	n := 12
	start := time.Now()
	ctx := t.Context()
	raw := storetest.PostgresURL(t)
	proxy := storetest.NewProxy(t, raw)
	c, err := bench.Start(ctx, bench.Config{DB: raw, ChildDB: proxy.URL(raw), WorkerProcesses: 2,
		Conversations: n, Duration: time.Minute, Lease: outageLease, Exe: benchExe, Env: benchEnv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)

	type window struct{ from, to time.Time }
	var (
		mu       sync.Mutex // guards settles
		settles  []window   // per answered card: sent → settled
		answers  atomic.Int64
		outages  []window
		stop     = make(chan struct{})
		done     = make(chan bench.Result, 1)
		duration = []time.Duration{3 * time.Second, 30 * time.Second}
	)
	go func() {
		done <- c.Drive(ctx, 30*time.Minute, bench.Mix{Stop: stop, Settle: 5 * time.Minute, RetryUnavailable: true,
			OnAnswer: func(string) { answers.Add(1) },
			OnSettle: func(sent, settled time.Time) {
				mu.Lock()
				settles = append(settles, window{sent, settled})
				mu.Unlock()
			}})
	}()
	// Between two outages the conversations answer some cards, so that each
	// cut finds turns and decisions under way.
	between := func() {
		want := answers.Load() + int64(2*n)
		for deadline := time.Now().Add(3 * time.Minute); answers.Load() < want && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond) // polling a condition, not a synchronisation
		}
	}
	for i, d := range duration {
		between()
		if i > 0 {
			// What the outage before left busy settles first (the outage
			// plus one lease), so each outage's figures are its own.
			for time.Since(outages[i-1].to) < outageLease+5*time.Second {
				time.Sleep(100 * time.Millisecond) // polling a condition, not a synchronisation
			}
		}
		w := window{from: time.Now()}
		proxy.Cut()
		time.Sleep(d) // the outage itself: a length of time, not a synchronisation
		if err := proxy.Restore(); err != nil {
			t.Fatalf("restore the database after %v: %v", d, err)
		}
		w.to = time.Now()
		outages = append(outages, w)
	}
	between()
	close(stop)
	res := <-done
	if res.Err != nil || res.Failed > 0 || res.Unfinished > 0 || res.FailedConversations > 0 {
		describeConversation(t, c, res.Err)
		for _, l := range c.LogLines(`"level":"ERROR"`) {
			t.Log(l)
		}
		t.Fatalf("%d tours failed, %d unfinished, %d conversations failed (%d answers 503, %d answers 500); the first failure: %v",
			res.Failed, res.Unfinished, res.FailedConversations, res.Unavailable, res.Internal, res.Err)
	}
	quiesce(t, c, 3*time.Minute)
	wantInvariants(t, c.DB)

	got := outcomes(t, c.DB)
	recorded := 0
	for _, k := range got {
		recorded += k
	}
	if recorded != res.Answers {
		var users int
		if err := c.DB.QueryRow(ctx, "SELECT COUNT(*) FROM conversation_messages WHERE role = 'user' AND content NOT LIKE 'Please improve%'").Scan(&users); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%d answers accepted, %d outcomes recorded (%v), %d answers stored as messages: answers were lost or counted wrong", res.Answers, recorded, got, users)
		extra, err := store.Collect(ctx, c.DB, func(sc store.Scanner) (string, error) {
			var conv, outcomes, answers int64
			if err := sc.Scan(&conv, &outcomes, &answers); err != nil {
				return "", err
			}
			return fmt.Sprintf("conversation %d: %d outcomes, %d answers", conv, outcomes, answers), nil
		}, `SELECT o.conversation_id, COUNT(*), (SELECT COUNT(*) FROM conversation_messages m WHERE m.conversation_id = o.conversation_id
			AND m.role = 'user' AND m.content NOT LIKE 'Please improve%') FROM conversation_outcomes o GROUP BY o.conversation_id`)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range extra {
			t.Log(e)
		}
		rows, err := store.Collect(ctx, c.DB, func(sc store.Scanner) (string, error) {
			var conv, after int64
			var runID, outcome string
			if err := sc.Scan(&conv, &runID, &outcome, &after); err != nil {
				return "", err
			}
			return fmt.Sprintf("outcome conversation %d run %s %s after message %d", conv, runID, outcome, after), nil
		}, "SELECT conversation_id, run_uuid, outcome, after_message FROM conversation_outcomes ORDER BY conversation_id, id")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			t.Log(r)
		}
	}
	if res.Internal > 0 {
		t.Errorf("%d requests answered 500 internal during the outages, want 503 database_unavailable", res.Internal)
	}
	if res.Unavailable == 0 {
		t.Errorf("no request met an outage (0 answers 503): the proof did not do what it says")
	}

	// How long a conversation was busy after an answer that met an outage
	// (sent before its end, settled after its start), against the outage
	// plus one lease and a reaper pass.
	mu.Lock()
	defer mu.Unlock()
	figures := make([]string, len(outages))
	for i, o := range outages {
		// An answer whose busy window met several outages may take all of
		// them: its limit is the outages it met plus one lease and a pass.
		busiest, met, limit, over := time.Duration(0), 0, time.Duration(0), 0
		for _, s := range settles {
			if !s.from.Before(o.to) || !s.to.After(o.from) {
				continue
			}
			met++
			// The recovery acts at the reaper's first pass after the lease
			// ended (it runs every quarter lease).
			own := outageLease + outageLease/4
			for _, p := range outages {
				if s.from.Before(p.to) && s.to.After(p.from) {
					own += p.to.Sub(p.from)
				}
			}
			d := s.to.Sub(s.from)
			if d > own {
				over++
			}
			if d > busiest {
				busiest, limit = d, own
			}
		}
		figures[i] = fmt.Sprintf("outage %v: %d answers met it, longest busy %v (its limit: the outages it met + one lease + a reaper pass = %v)",
			o.to.Sub(o.from).Round(100*time.Millisecond), met, busiest.Round(100*time.Millisecond), limit.Round(100*time.Millisecond))
		if over > 0 {
			t.Errorf("%d answers that met the outage of %v left their conversation busy longer than the outages they met plus one lease and a reaper pass (longest %v)",
				over, o.to.Sub(o.from).Round(100*time.Millisecond), busiest.Round(100*time.Millisecond))
		}
	}

	// Once everything settled, nothing is pending: within one lease and a
	// pass of River's rescuer every chat job a worker gave up is finished.
	pending := -1.0
	for deadline := time.Now().Add(outageLease + 90*time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if pending = metric(t, c, "waymark_chat_jobs_pending"); pending == 0 {
			break
		}
	}
	if pending != 0 {
		t.Errorf("waymark_chat_jobs_pending once everything settled = %v, want 0", pending)
	}
	t.Logf("%d conversations, lease %v, 1 serve + 2 workers through a cut proxy: %d tours, %d answers, outcomes %v, %d answers 503 (retried after Retry-After), %d answers 500; %s; p50/p99 answer %v/%v; %v in all",
		n, outageLease, res.Tours, res.Answers, got, res.Unavailable, res.Internal, strings.Join(figures, "; "),
		pct(res.Latencies, 0.5), pct(res.Latencies, 0.99), time.Since(start).Round(time.Second))
}

// metric reads the value of the unlabelled metric name from the server's /metrics.
func metric(t *testing.T, c *bench.Cluster, name string) float64 {
	t.Helper()
	resp, err := c.Client.Get(c.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}
