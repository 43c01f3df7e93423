package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"waymark/internal/bench"
	"waymark/internal/invariant"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// The scale and crash proofs run at a size that fits the CI's time
// limit on a loaded 2-core machine; WAYMARK_PROOF_FULL=1 runs the issue's
// size (500 conversations; 100 kills).
func proofFull() bool { return os.Getenv("WAYMARK_PROOF_FULL") == "1" }

// loadLease is the --lease of the load proof's processes: short, so that
// nothing waits long on a lease.
const loadLease = 5 * time.Second

// crashLease is the --lease of the crash proof (WAYMARK_PROOF_LEASE, default
// 15 s). Not shorter: the reaper runs on River's elected leader, and when
// the leader is the worker killed, a new one is elected only after the old
// one's leadership lapses (15 s and up to 6 s of election interval), so
// "within two leases" holds for a lease of 15 s or more — the default 60 s
// among them.
func crashLease(t *testing.T) time.Duration {
	v := os.Getenv("WAYMARK_PROOF_LEASE")
	if v == "" {
		return 15 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("WAYMARK_PROOF_LEASE: %v", err)
	}
	return d
}

// startProofCluster starts 1 API process (serve --workers 0) and 3 worker
// processes with lease on a PostgreSQL schema of the test's own.
func startProofCluster(t *testing.T, conversations int, lease time.Duration) *bench.Cluster {
	t.Helper()
	c, err := bench.Start(t.Context(), bench.Config{DB: storetest.PostgresURL(t), WorkerProcesses: 3,
		Conversations: conversations, Duration: time.Minute, Lease: lease, Exe: benchExe, Env: benchEnv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// quiesce waits (at most limit) until no run is queued or running, no chat
// job waits or runs and no conversation is processing; it reads the
// conversations still processing through the API, which releases a lost
// turn. It fails the test with what is left when the limit passes.
func quiesce(t *testing.T, c *bench.Cluster, limit time.Duration) {
	t.Helper()
	ctx := t.Context()
	deadline := time.Now().Add(limit)
	for {
		processing, err := c.Release(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var runs, jobs int
		if err := c.DB.QueryRow(ctx, "SELECT COUNT(*) FROM runs WHERE status IN ('queued', 'running')").Scan(&runs); err != nil {
			t.Fatal(err)
		}
		if err := c.DB.QueryRow(ctx, `SELECT COUNT(*) FROM river_job WHERE kind IN ('waymark_run', 'waymark_chat')
			AND state IN ('available', 'scheduled', 'retryable', 'pending')`).Scan(&jobs); err != nil {
			t.Fatal(err)
		}
		if processing == 0 && runs == 0 && jobs == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d conversations processing, %d runs queued or running, %d jobs waiting", limit, processing, runs, jobs)
		}
		time.Sleep(200 * time.Millisecond) // polling a condition, not a synchronisation
	}
}

// wantInvariants checks every invariant of DESIGN §6 the stored rows show.
// describeStuck logs, for a failed proof, every conversation still
// processing with its run and the chat jobs that name it: what a reader
// needs to tell which rule left it there.
func describeStuck(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	rows, err := store.Collect(ctx, db, func(sc store.Scanner) (string, error) {
		var id, updated int64
		var run string
		var follows bool
		if err := sc.Scan(&id, &updated, &run, &follows); err != nil {
			return "", err
		}
		line := fmt.Sprintf("conversation %d processing since %v, pending run %q, follows %v", id, time.UnixMicro(updated), run, follows)
		var status, owner string
		var expires int64
		if run != "" && db.QueryRow(ctx, "SELECT status, lease_owner, lease_expires_at FROM runs WHERE uuid = ?", run).Scan(&status, &owner, &expires) == nil {
			line += fmt.Sprintf("; run %s, lease %q until %v", status, owner, time.UnixMicro(expires))
		}
		return line, nil
	}, "SELECT id, updated_at, pending_run_uuid, follows_run FROM conversations WHERE status = 'processing'")
	if err != nil {
		t.Logf("describe stuck conversations: %v", err)
		return
	}
	for _, l := range rows {
		t.Log(l)
	}
	jobs, err := store.Collect(ctx, db, func(sc store.Scanner) (string, error) {
		var id int64
		var kind, state, args string
		var attempt int
		if err := sc.Scan(&id, &kind, &state, &attempt, &args); err != nil {
			return "", err
		}
		return fmt.Sprintf("job %d %s %s attempt %d %s", id, kind, state, attempt, args), nil
	}, "SELECT id, kind, state, attempt, CAST(args AS TEXT) FROM river_job WHERE state NOT IN ('completed') ORDER BY id")
	if err != nil {
		t.Logf("describe jobs: %v", err)
		return
	}
	for i, j := range jobs {
		if i == 30 {
			t.Logf("… and %d jobs more", len(jobs)-i)
			break
		}
		t.Log(j)
	}
}

// describeConversation logs the history of the conversation a driver's
// error names (…/conversations/N/…): its messages, the chat jobs that name
// it in any state, and each of its runs with its events — what happened
// before a request was refused.
func describeConversation(t *testing.T, c *bench.Cluster, err error) {
	t.Helper()
	db := c.DB
	m := regexp.MustCompile(`/api/conversations/(\d+)`).FindStringSubmatch(fmt.Sprint(err))
	if m == nil {
		return
	}
	ctx := context.WithoutCancel(t.Context())
	lines := func(what, query string, args ...any) []string {
		out, err := store.Collect(ctx, db, store.Column[string], query, args...)
		if err != nil {
			t.Logf("describe %s: %v", what, err)
		}
		return out
	}
	for _, l := range lines("conversation", `SELECT status || ' updated ' || updated_at || ' last ' || last_run_uuid || ' pending ' || pending_run_uuid ||
		' follows ' || CAST(follows_run AS TEXT) || ' error ' || error || ' card ' || card FROM conversations WHERE id = ?`, m[1]) {
		t.Log("conversation " + m[1] + ": " + l)
	}
	for _, l := range lines("messages", `SELECT created_at || ' ' || role || ' ' || notice || ' ' || content FROM conversation_messages WHERE conversation_id = ? ORDER BY id`, m[1]) {
		t.Log("  message " + l)
	}
	for _, l := range lines("jobs", `SELECT id || ' ' || state || ' attempt ' || attempt || ' at ' || COALESCE(CAST(attempted_at AS TEXT), '-') || ' by ' || COALESCE(CAST(attempted_by AS TEXT), '-') || ' ' || CAST(args AS TEXT)
		FROM river_job WHERE kind = 'waymark_chat' AND (args->'job'->>'conversation')::bigint = ? ORDER BY id`, m[1]) {
		t.Log("  job " + l)
	}
	for _, l := range c.LogLines(`"conversation":` + m[1] + `,`) {
		t.Log("  log " + l)
	}
	for _, l := range c.LogLines(`"conversation":` + m[1] + `}`) {
		t.Log("  log " + l)
	}
	runs := lines("runs", `SELECT uuid FROM runs WHERE uuid IN (SELECT run_uuid FROM run_events) AND uuid IN (
		SELECT last_run_uuid FROM conversations WHERE id = ? UNION SELECT pending_run_uuid FROM conversations WHERE id = ?
		UNION SELECT run_uuid FROM conversation_outcomes WHERE conversation_id = ?) ORDER BY created_at`, m[1], m[1], m[1])
	for _, uuid := range runs {
		for _, l := range lines("run", `SELECT status || ' requeues ' || requeue_count || ' lease ' || lease_owner || ' reason ' || termination_reason FROM runs WHERE uuid = ?`, uuid) {
			t.Log("  run " + uuid + ": " + l)
		}
		for _, l := range c.LogLines(uuid) {
			t.Log("    log " + l)
		}
		for _, l := range lines("events", `SELECT sequence || ' ' || created_at || ' ' || kind || ' ' || LEFT(payload, 160) FROM run_events WHERE run_uuid = ? ORDER BY sequence`, uuid) {
			t.Log("    event " + l)
		}
	}
}

// wantInvariants checks every invariant, or only the checks named.
func wantInvariants(t *testing.T, db *store.DB, only ...string) {
	t.Helper()
	vs, err := invariant.New(db, nil).Check(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(only) > 0 {
		vs = slices.DeleteFunc(vs, func(v invariant.Violation) bool { return !slices.Contains(only, v.Check) })
	}
	if len(vs) > 0 {
		t.Fatalf("%d invariant violations:%s", len(vs), invariant.Describe(vs))
	}
}

// outcomes counts the stored proposal outcomes by kind.
func outcomes(t *testing.T, db *store.DB) map[string]int {
	t.Helper()
	rows, err := store.Collect(t.Context(), db, func(sc store.Scanner) (struct {
		kind string
		n    int
	}, error) {
		var r struct {
			kind string
			n    int
		}
		return r, sc.Scan(&r.kind, &r.n)
	}, "SELECT outcome, COUNT(*) FROM conversation_outcomes GROUP BY outcome")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.kind] = r.n
	}
	return out
}

// One API process and three worker processes on one
// PostgreSQL database, many guided conversations at once answering cards at
// random, withdrawing cards with new messages and ending tours early: when
// all is done every invariant holds on the stored rows and events — each
// approved call written at most once, no write without an approval, every
// run in a defined state, every accepted skip kept as an open point until a
// later write or keep closed it.
func TestUnderLoadOneAPIAndThreeWorkerProcessesKeepEveryInvariant(t *testing.T) {
	n, d, mix := 40, 15*time.Second, bench.Mix{End: 0.1, Withdraw: 0.15}
	if proofFull() {
		// On the loaded 2-core machine an answer waits behind hundreds of
		// turns: minutes, not milliseconds.
		n, d, mix.Settle, mix.Grace = 500, 2*time.Minute, 10*time.Minute, 15*time.Minute
	}
	start := time.Now()
	c := startProofCluster(t, n, loadLease)
	res := c.Drive(t.Context(), d, mix)
	if res.Err != nil || res.Unfinished > 0 {
		t.Fatalf("%d tours failed, %d unfinished; the first failure: %v", res.Failed, res.Unfinished, res.Err)
	}
	quiesce(t, c, 2*time.Minute)
	wantInvariants(t, c.DB)
	got := outcomes(t, c.DB)
	if res.Answers == 0 || res.Withdrawn == 0 || res.EndedEarly == 0 || got["applied"] == 0 || got["skipped"] == 0 {
		t.Errorf("the load did not do everything: %d answers, %d withdrawn, %d ended early, outcomes %v", res.Answers, res.Withdrawn, res.EndedEarly, got)
	}
	t.Logf("%d conversations: %d tours (%d ended early), %d answers, %d cards withdrawn, outcomes %v; p50/p99 answer %v/%v; %v in all",
		n, res.Tours, res.EndedEarly, res.Answers, res.Withdrawn, got, pct(res.Latencies, 0.5), pct(res.Latencies, 0.99), time.Since(start).Round(time.Second))
}

func pct(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))].Round(time.Millisecond)
}

// held is a run a killed worker held, followed until it is settled again.
type held struct {
	uuid    string
	inWrite bool // its non-idempotent write was fenced when the worker died
	killed  time.Time
	// settled: no longer running under the dead process (requeued, or
	// dead-lettered); again: running, waiting or ended after another
	// process took it (zero when it was dead-lettered).
	settled, again time.Duration
	status         string
}

// Kill -9 a worker at random points of tours — some while
// it is inside a write — and start it again; every run the dead worker held
// is requeued or dead-lettered within two lease lengths, and once all is
// done every invariant holds and every run is in a defined state.
func TestKill9OfWorkersAtRandomPointsLeavesEveryRunDefinedWithinTwoLeases(t *testing.T) {
	n, kills := 16, 10
	if proofFull() {
		n, kills = 60, 100
	}
	start := time.Now()
	ctx := t.Context()
	lease := crashLease(t)
	c := startProofCluster(t, n, lease)
	stop := make(chan struct{})
	done := make(chan bench.Result, 1)
	// An accepted apply or variant starts a write on some worker soon after:
	// about half of the kills come a random few milliseconds after one.
	applied := make(chan struct{}, 1)
	onAnswer := func(answer string) {
		if answer == "apply" || answer == "variant" {
			select {
			case applied <- struct{}{}:
			default:
			}
		}
	}
	go func() {
		done <- c.Drive(ctx, 30*time.Minute, bench.Mix{End: 0.05, Withdraw: 0.1, TolerateFailed: true, Settle: 4*lease + time.Minute,
			Stop: stop, OnAnswer: onAnswer})
	}()
	var (
		mu       sync.Mutex // guards followed
		followed []*held
		wg       sync.WaitGroup
	)
	rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), 7))
	inWrite, inTx := 0, 0
	for k := range kills {
		victim, kind := pickVictim(t, c, rng, applied)
		pid := c.WorkerPIDs()[victim]
		runs := heldBy(t, c.DB, pid)
		if err := c.KillWorker(victim); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		switch kind {
		case fencedRun:
			inWrite++
		case inWriteTx:
			inTx++
		}
		for uuid, w := range runs {
			h := &held{uuid: uuid, inWrite: w, killed: killed}
			mu.Lock()
			followed = append(followed, h)
			mu.Unlock()
			wg.Go(func() { follow(ctx, c.DB, h, pid) })
		}
		if err := c.RestartWorker(ctx, victim); err != nil {
			t.Fatalf("restart after kill %d: %v", k+1, err)
		}
	}
	close(stop)
	res := <-done
	wg.Wait()
	if res.Err != nil || res.Unfinished > 0 {
		describeStuck(t, c.DB)
		describeConversation(t, c, res.Err)
		t.Fatalf("%d tours failed, %d unfinished; the first failure: %v", res.Failed, res.Unfinished, res.Err)
	}
	quiesce(t, c, 4*lease+time.Minute)
	wantInvariants(t, c.DB)
	empty, missing := lostReplies(t, c.DB)
	t.Logf("replies after %d kills: %d empty assistant messages, %d turns ended without the model's reply", kills, empty, missing)
	if empty+missing > 0 {
		t.Errorf("%d empty assistant messages and %d completed turns without a reply, want 0 of each", empty, missing)
	}

	var worstSettle, worstAgain time.Duration
	requeued, dead, writes := 0, 0, 0
	for _, h := range followed {
		if h.settled == 0 {
			t.Errorf("run %s held by a killed worker was never settled again", h.uuid)
			continue
		}
		if h.settled > 2*lease {
			t.Errorf("run %s held by a killed worker was settled %v after the kill, want within two leases (%v)", h.uuid, h.settled, 2*lease)
		}
		worstSettle = max(worstSettle, h.settled)
		if h.again > 0 {
			requeued++
			worstAgain = max(worstAgain, h.again)
		} else {
			dead++
		}
		if h.inWrite && h.again == 0 {
			writes++ // dead-lettered as fenced, or its fence was cleared just before the kill (then a requeue is right): write_once decides
		}
	}
	if res.Answers == 0 || len(followed) == 0 {
		t.Errorf("the kills hit nothing: %d answers, %d runs held by killed workers", res.Answers, len(followed))
	}
	failures, err := store.Collect(ctx, c.DB, store.Column[string], "SELECT error FROM conversations WHERE status = 'failed'")
	if err != nil {
		t.Fatal(err)
	}
	why := map[string]int{}
	for _, f := range failures {
		why[f]++
	}
	// Why the failed conversations failed, as the processes logged it: a
	// turn dead-lettered after a kill, or one lost before its run began.
	causes := map[string]int{}
	for _, l := range c.LogLines(`"msg":"chat turn failed"`) {
		var e struct {
			Err string `json:"err"`
		}
		if i := strings.IndexByte(l, '{'); i >= 0 && json.Unmarshal([]byte(l[i:]), &e) == nil {
			causes[e.Err]++
		}
	}
	t.Logf("causes of the failed turns: %v", causes)
	// A decided turn whose worker died outside a write is continued from its
	// decision, not dead-lettered: no run ends not_retryable.
	var notRetryable int
	if err := c.DB.QueryRow(ctx, "SELECT COUNT(*) FROM runs WHERE termination_reason = 'not_retryable'").Scan(&notRetryable); err != nil {
		t.Fatal(err)
	}
	if notRetryable > 0 {
		t.Errorf("%d runs ended not_retryable after the kills, want 0", notRetryable)
	}
	if proofFull() && inTx == 0 {
		t.Errorf("none of the %d kills came inside a write's transaction", kills)
	}
	t.Logf("%d kills (%d inside a write's transaction, %d while a write was fenced) of 3 workers under %d conversations: %d runs held by them, %d requeued and ran again (worst %v after the kill), %d dead-lettered (%d fenced at the kill); worst settle %v (lease %v); %d tours, %d failed conversations %v, %d runs not_retryable, %d answers; %v in all",
		kills, inTx, inWrite, n, len(followed), requeued, worstAgain.Round(time.Millisecond), dead, writes, worstSettle.Round(time.Millisecond), lease, res.Tours, res.FailedConversations, why, notRetryable, res.Answers, time.Since(start).Round(time.Second))
}

// lostReplies counts, once all is settled, the assistant messages with
// neither content nor notice (a reply lost with a killed worker was settled
// as one) and the idle conversations whose last run completed but whose
// transcript ends with the editor's message or answer: no reply at all.
func lostReplies(t *testing.T, db *store.DB) (empty, missing int) {
	t.Helper()
	ctx := t.Context()
	if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM conversation_messages WHERE role = 'assistant' AND content = '' AND notice = ''").Scan(&empty); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM conversations c JOIN runs r ON r.uuid = c.last_run_uuid
		WHERE c.status = 'idle' AND r.status = 'completed' AND (SELECT m.role FROM conversation_messages m
		WHERE m.conversation_id = c.id ORDER BY m.id DESC LIMIT 1) = 'user'`).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	return empty, missing
}

// victimKind is where pickVictim found its victim.
type victimKind int

const (
	anyPoint  victimKind = iota
	fencedRun            // holding a run whose non-idempotent write is fenced
	inWriteTx            // with a content write's transaction open (bench.Cluster.WorkersInWrite)
)

// pickVictim waits for a random point of the tours and picks the worker to
// kill. Half of the time the point follows an accepted apply or variant:
// for up to 60 ms it looks for a worker with the write's transaction open
// and picks it (a kill inside the write); else, and the other half of the
// time after a random 50 ms to 1 s, it picks one holding a fenced write,
// else one holding a running run, else a random one.
func pickVictim(t *testing.T, c *bench.Cluster, rng *rand.Rand, applied <-chan struct{}) (int, victimKind) {
	t.Helper()
	wait := time.Duration(50+rng.IntN(950)) * time.Millisecond
	if rng.IntN(2) == 0 {
		select { // drop an old signal: the next apply is the point
		case <-applied:
		default:
		}
		select {
		case <-applied:
			for end := time.Now().Add(60 * time.Millisecond); time.Now().Before(end); {
				ws, err := c.WorkersInWrite(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if len(ws) > 0 {
					return ws[rng.IntN(len(ws))], inWriteTx
				}
			}
			wait = 0
		case <-time.After(5 * time.Second):
			wait = 0
		}
	}
	time.Sleep(wait) // the random point of the kill, not a synchronisation
	type row struct {
		owner  string
		fenced bool
	}
	rows, err := store.Collect(t.Context(), c.DB, func(sc store.Scanner) (row, error) {
		var r row
		return r, sc.Scan(&r.owner, &r.fenced)
	}, "SELECT lease_owner, pending_effect <> '' FROM runs WHERE status = 'running' ORDER BY pending_effect <> '' DESC")
	if err != nil {
		t.Fatal(err)
	}
	pids := c.WorkerPIDs()
	for _, r := range rows {
		if i := slices.Index(pids, bench.LeasePID(r.owner)); i >= 0 {
			if r.fenced {
				return i, fencedRun
			}
			return i, anyPoint
		}
	}
	return rng.IntN(len(pids)), anyPoint
}

// heldBy returns the runs process pid holds, with whether a write of each is fenced.
func heldBy(t *testing.T, db *store.DB, pid int) map[string]bool {
	t.Helper()
	type row struct {
		uuid, owner, effect string
	}
	rows, err := store.Collect(t.Context(), db, func(sc store.Scanner) (row, error) {
		var r row
		return r, sc.Scan(&r.uuid, &r.owner, &r.effect)
	}, "SELECT uuid, lease_owner, pending_effect FROM runs WHERE status = 'running'")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, r := range rows {
		if bench.LeasePID(r.owner) == pid {
			out[r.uuid] = r.effect != ""
		}
	}
	return out
}

// follow polls run h (held by the killed process pid) until another process
// runs it or it ended, for at most three minutes.
func follow(ctx context.Context, db *store.DB, h *held, pid int) {
	deadline := h.killed.Add(3 * time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var status, owner string
		if err := db.QueryRow(ctx, "SELECT status, lease_owner FROM runs WHERE uuid = ?", h.uuid).Scan(&status, &owner); err != nil {
			return
		}
		since := time.Since(h.killed)
		mine := status == "running" && bench.LeasePID(owner) == pid
		if !mine && h.settled == 0 {
			h.settled, h.status = since, status
		}
		switch {
		case mine, status == "queued":
		case status == "failed" && h.again == 0:
			h.status = fmt.Sprintf("failed after %v", since)
			return
		default: // running on another process, waiting, or ended after it
			h.again, h.status = since, status
			return
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, not a synchronisation
	}
}
