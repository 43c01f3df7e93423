package chat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/clock"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// The package's tests share one migrated database of each dialect (a
// PostgreSQL schema takes seconds to migrate on a busy machine): each test
// works on conversations of its own, found by id.
var shared struct {
	mu      sync.Mutex
	dbs     map[store.Dialect]*store.DB
	cleanup []func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range shared.cleanup {
		f()
	}
	os.Exit(code)
}

// sharedDB is the package's database of dialect d, opened and migrated on
// first use. PostgreSQL comes from storetest.EnvPostgres as storetest's
// does: without it the test skips, or fails under CI.
func sharedDB(t *testing.T, d store.Dialect) *store.DB {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if db := shared.dbs[d]; db != nil {
		return db
	}
	cfg := &store.Config{NoFastPaths: os.Getenv(store.EnvNoFastPaths) == "1", CheckNesting: true}
	ctx := context.Background()
	var raw string
	switch d {
	case store.SQLite:
		dir, err := os.MkdirTemp("", "chattest")
		if err != nil {
			t.Fatal(err)
		}
		shared.cleanup = append(shared.cleanup, func() { os.RemoveAll(dir) })
		raw = "sqlite:" + filepath.Join(dir, "test.db")
	case store.Postgres:
		base := os.Getenv(storetest.EnvPostgres)
		if base == "" {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not set but CI is: the PostgreSQL half must run", storetest.EnvPostgres)
			}
			t.Skipf("%s not set: skipping the PostgreSQL half", storetest.EnvPostgres)
		}
		admin, err := store.Open(ctx, base)
		if err != nil {
			t.Fatalf("open postgres: %v", err)
		}
		var b [6]byte
		_, _ = rand.Read(b[:])
		schema := "t_" + hex.EncodeToString(b[:])
		if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			admin.Close()
			t.Fatalf("create schema: %v", err)
		}
		shared.cleanup = append(shared.cleanup, func() {
			_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			admin.Close()
		})
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		raw = u.String()
	}
	db, err := store.OpenConfig(ctx, raw, cfg)
	if err != nil {
		t.Fatalf("open %s: %v", d, err)
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		t.Fatalf("migrate %s: %v", d, err)
	}
	if shared.dbs == nil {
		shared.dbs = map[store.Dialect]*store.DB{}
	}
	shared.dbs[d] = db
	shared.cleanup = append([]func(){func() { db.Close() }}, shared.cleanup...)
	return db
}

// eachDB runs fn as subtests "sqlite" and "postgres" on the package's
// shared databases, each starting with no conversation: what a subtest
// leaves is deleted after it (the package's tests run one at a time), so
// that a reaper pass sees only the test's own conversations.
func eachDB(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	run := func(t *testing.T, db *store.DB) {
		t.Cleanup(func() {
			// Children first: SQLite enforces no cascade without its foreign keys pragma.
			for _, table := range []string{"conversation_messages", "conversation_outcomes", "conversation_replies", "conversations"} {
				if _, err := db.Exec(context.Background(), "DELETE FROM "+table); err != nil {
					t.Errorf("clean %s: %v", table, err)
				}
			}
		})
		fn(t, db)
	}
	t.Run("sqlite", func(t *testing.T) { run(t, sharedDB(t, store.SQLite)) })
	t.Run("postgres", func(t *testing.T) { run(t, sharedDB(t, store.Postgres)) })
}

// fakeRuntime is the agent runtime as the chat uses it, in memory: runs by
// uuid and their states. A turn's run ends as next says (completed with an
// answer unless set); a decision takes the run to decided (completed unless
// set). Hooks let a test act inside a call.
type fakeRuntime struct {
	db *store.DB

	mu        sync.Mutex // guards everything below
	runs      map[string]agent.Status
	n         int
	next      agent.Status // the state a turn's new run reaches
	decided   agent.Status // the state a decision takes its run to
	refuse    error        // Approve's and SubmitInput's refusal, when set
	runErr    error        // Run's error, when set (after its run began)
	cancelErr error        // CancelIfWaiting's error, when set
	statusErr error        // Status's error, when set
	decisions []agent.Decision
	onCancel  func() // runs inside Cancel, once
}

var _ Runtime = (*fakeRuntime)(nil)

func newFakeRuntime(db *store.DB) *fakeRuntime {
	return &fakeRuntime{db: db, runs: map[string]agent.Status{}, next: agent.Status{Status: run.StatusCompleted, Answer: "Erledigt."},
		decided: agent.Status{Status: run.StatusCompleted, Answer: "Übernommen."}}
}

// set gives run id state st.
func (f *fakeRuntime) set(id string, st agent.Status) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st.UUID = id
	f.runs[id] = st
}

func (f *fakeRuntime) get(id string) (agent.Status, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.runs[id]
	return st, ok
}

// waitingForCard is a run state waiting for approval of the card with digest d.
func waitingForCard(d string) agent.Status {
	return agent.Status{Status: run.StatusWaitingForApproval, Pending: &agent.Pending{Kind: "approval", TurnDigest: d, Answers: "approval",
		Calls: []agent.CallView{{ID: "c1", Tool: "fake_tool"}}}}
}

// waitingForInput is a run state waiting for the answer to a question with digest d.
func waitingForInput(d string) agent.Status {
	return agent.Status{Status: run.StatusWaitingForInput, Pending: &agent.Pending{Kind: "input", TurnDigest: d, Answers: "input",
		Question: "Welche Farbe?", Schema: map[string]any{"type": "object", "properties": map[string]any{"choice": map[string]any{"enum": []string{"rot", "blau"}}}}}}
}

func (f *fakeRuntime) Run(ctx context.Context, actor int64, req agent.Request) (agent.Result, error) {
	f.mu.Lock()
	f.n++
	id := fmt.Sprintf("run-%d", f.n)
	f.mu.Unlock()
	if req.StartTx != nil {
		if err := f.db.InTx(ctx, func(tx *store.Tx) error { return req.StartTx(ctx, tx, id) }); err != nil {
			return agent.Result{}, err
		}
	}
	f.mu.Lock()
	st, err := f.next, f.runErr
	f.mu.Unlock()
	if err != nil {
		f.set(id, agent.Status{Status: run.StatusFailed, TerminationReason: run.Reason("error")})
		return agent.Result{UUID: id}, err
	}
	f.set(id, st)
	return agent.Result{UUID: id, Answer: st.Answer}, nil
}

func (f *fakeRuntime) decide(id string, d agent.Decision, digest string) (agent.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse != nil {
		return agent.Result{}, f.refuse
	}
	st, ok := f.runs[id]
	if !ok || !st.Status.Waiting() || st.Pending == nil || st.Pending.TurnDigest != digest {
		return agent.Result{}, agent.ErrNotWaiting
	}
	f.decisions = append(f.decisions, d)
	next := f.decided
	next.UUID = id
	f.runs[id] = next
	return agent.Result{UUID: id, Answer: next.Answer, Status: &next}, nil
}

func (f *fakeRuntime) Approve(ctx context.Context, actor int64, id string, d agent.Decision) (agent.Result, error) {
	return f.decide(id, d, d.TurnDigest)
}

func (f *fakeRuntime) SubmitInput(ctx context.Context, actor int64, id string, in agent.Input) (agent.Result, error) {
	return f.decide(id, agent.Decision{TurnDigest: in.TurnDigest, Approve: true}, in.TurnDigest)
}

func (f *fakeRuntime) Status(ctx context.Context, actor int64, id string) (agent.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.statusErr != nil {
		return agent.Status{}, f.statusErr
	}
	st, ok := f.runs[id]
	if !ok {
		return agent.Status{}, agent.ErrNotFound
	}
	return st, nil
}

func (f *fakeRuntime) WaitsFor(ctx context.Context, actor int64, id, digest string) (bool, error) {
	st, err := f.Status(ctx, actor, id)
	return err == nil && st.Status.Waiting() && st.Pending != nil && st.Pending.TurnDigest == digest, err
}

func (f *fakeRuntime) Live(ctx context.Context, actor int64, id string) (map[string]any, map[string]any, error) {
	return nil, nil, nil
}

func (f *fakeRuntime) CancelIfWaiting(ctx context.Context, actor int64, id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancelErr != nil {
		return false, f.cancelErr
	}
	st, ok := f.runs[id]
	if !ok || !st.Status.Waiting() {
		return false, nil
	}
	f.runs[id] = agent.Status{UUID: id, Status: run.StatusCancelled, TerminationReason: run.ReasonCancelled}
	return true, nil
}

func (f *fakeRuntime) Cancel(ctx context.Context, actor int64, id string) (bool, error) {
	f.mu.Lock()
	hook := f.onCancel
	f.onCancel = nil
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.runs[id]
	if !ok || st.Status.Terminal() {
		return false, nil
	}
	f.runs[id] = agent.Status{UUID: id, Status: run.StatusCancelled, TerminationReason: run.ReasonCancelled}
	return true, nil
}

func (f *fakeRuntime) Draft(id string) string { return "" }
func (f *fakeRuntime) CutShort(id string)     {}
func (f *fakeRuntime) Events(ctx context.Context, actor int64, id string, after int64, limit int) ([]agent.Event, error) {
	return nil, nil
}

// fakeQueue is the chat's queue in memory: a job inserted in a transaction
// is recorded once that transaction commits, and waits until the test
// works it (work). It can hand a job back (RescueChatJob).
type fakeQueue struct {
	db *store.DB

	mu      sync.Mutex // guards everything below
	pending map[*store.Tx][]json.RawMessage
	jobs    []json.RawMessage // committed, not worked yet
	taken   []json.RawMessage // taken by a worker that died (take)
	rescued int
}

var (
	_ Queue       = (*fakeQueue)(nil)
	_ chatRescuer = (*fakeQueue)(nil)
)

func (q *fakeQueue) InTx(ctx context.Context, fn func(tx *store.Tx) error) error {
	var tx *store.Tx
	err := q.db.InTx(ctx, func(t *store.Tx) error {
		tx = t
		q.mu.Lock()
		delete(q.pending, t) // a transaction run again starts afresh
		q.mu.Unlock()
		return fn(t)
	})
	q.mu.Lock()
	defer q.mu.Unlock()
	if err == nil {
		q.jobs = append(q.jobs, q.pending[tx]...)
	}
	delete(q.pending, tx)
	return err
}

func (q *fakeQueue) InsertChatTx(ctx context.Context, tx *store.Tx, payload any) error {
	b, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == nil {
		q.pending = map[*store.Tx][]json.RawMessage{}
	}
	q.pending[tx] = append(q.pending[tx], b)
	return nil
}

func (q *fakeQueue) ChatPending(ctx context.Context, db store.Querier) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.jobs), nil
}

func (q *fakeQueue) ChatJobWaiting(ctx context.Context, field string, value int64, heldSince time.Time) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, j := range q.jobs {
		var m map[string]any
		if json.Unmarshal(j, &m) == nil && m[field] == float64(value) {
			return true, nil
		}
	}
	return false, nil
}

func (q *fakeQueue) RescueChatJob(ctx context.Context, conversation, at int64, heldSince time.Time) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, j := range q.taken {
		var jb job
		if json.Unmarshal(j, &jb) == nil && jb.Conversation == conversation && jb.At == at {
			q.taken = append(q.taken[:i], q.taken[i+1:]...)
			q.jobs = append(q.jobs, j)
			q.rescued++
			return true, nil
		}
	}
	return false, nil
}

// take takes the next job off the queue, as a worker that then dies does.
func (q *fakeQueue) take(t *testing.T) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.jobs) == 0 {
		t.Fatal("no job to take")
	}
	q.taken, q.jobs = append(q.taken, q.jobs[0]), q.jobs[1:]
}

// harness is a chat service on a shared database with a fake runtime,
// a fake queue and a fake clock.
type harness struct {
	t   *testing.T
	db  *store.DB
	s   *Service
	rt  *fakeRuntime
	q   *fakeQueue
	clk *clock.Fake

	mu     sync.Mutex
	before map[string]func() // runs once at the claim of op (Deps.Test.BeforeClaim)
}

func newHarness(t *testing.T, db *store.DB) *harness {
	h := &harness{t: t, db: db, rt: newFakeRuntime(db), q: &fakeQueue{db: db}, clk: clock.NewFake(time.Now()), before: map[string]func(){}}
	h.s = New(Deps{DB: db, Runtime: h.rt, Queue: h.q, Ender: &hookEnder{}}, &Config{Clock: h.clk, Test: TestConfig{BeforeClaim: h.beforeClaim}})
	t.Cleanup(h.s.Close)
	return h
}

func (h *harness) beforeClaim(op string) {
	h.mu.Lock()
	f := h.before[op]
	delete(h.before, op)
	h.mu.Unlock()
	if f != nil {
		f()
	}
}

// at makes f run once just before op's claim (op: message, answer, stop,
// end-tour …): a request that read the conversation and is about to claim it.
func (h *harness) at(op string, f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.before[op] = f
}

// work works every job on the queue, in order, until none is left.
func (h *harness) work() {
	h.t.Helper()
	for {
		h.q.mu.Lock()
		if len(h.q.jobs) == 0 {
			h.q.mu.Unlock()
			return
		}
		j := h.q.jobs[0]
		h.q.jobs = h.q.jobs[1:]
		h.q.mu.Unlock()
		if err := h.s.Work(context.Background(), j); err != nil {
			h.t.Fatalf("Work: %v", err)
		}
	}
}

// jobs is how many jobs wait on the queue.
func (h *harness) jobs() int {
	h.q.mu.Lock()
	defer h.q.mu.Unlock()
	return len(h.q.jobs)
}

// owner is the user every conversation of the harness belongs to.
const owner = 2

// conversation stores a conversation in status st on run pending (its
// state set on the fake runtime when given), a process conversation when
// process is set, updated now; it returns its id.
func (h *harness) conversation(st Status, process bool, pending string, run *agent.Status) int64 {
	h.t.Helper()
	ctx := context.Background()
	card := ""
	r := row{Status: st, PendingRun: pending}
	if run != nil {
		h.rt.set(pending, *run)
		stored := *run
		stored.UUID = pending
		switch st {
		case AwaitingApproval:
			b, _ := json.Marshal(h.s.settle.cardOf(r, stored))
			card = string(b)
		case AwaitingInput:
			q := questionOf(stored)
			b, _ := json.Marshal(storedQuestion{Question: *q, Schema: q.Schema})
			card = string(b)
		}
	}
	now := micros(h.s.clk)
	var id int64
	if err := h.db.QueryRow(ctx, `INSERT INTO conversations (owner_uid, configuration_uid, page_uid, language, process, status,
		pending_run_uuid, card, created_at, updated_at) VALUES (?, 1, 0, 0, ?, ?, ?, ?, ?, ?) RETURNING id`,
		owner, process, string(st), pending, card, now, now).Scan(&id); err != nil {
		h.t.Fatal(err)
	}
	return id
}

// row reads conversation id.
func (h *harness) row(id int64) row {
	h.t.Helper()
	r, err := getRow(context.Background(), h.db, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// raw is conversation id's stored row and transcript as text: what a
// loser must leave unchanged.
func (h *harness) raw(id int64) string {
	h.t.Helper()
	msgs, err := messages(context.Background(), h.db, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return fmt.Sprintf("%s %+v", rawConversation(h.t, h.db, id), msgs)
}

// transcript is conversation id's messages.
func (h *harness) transcript(id int64) []Message {
	h.t.Helper()
	msgs, err := messages(context.Background(), h.db, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return msgs
}

// want fails unless conversation id is in status st with error code e.
func (h *harness) want(id int64, st Status, e string) row {
	h.t.Helper()
	r := h.row(id)
	if r.Status != st || r.Error != e {
		h.t.Fatalf("conversation = %s %q, want %s %q (%+v)", r.Status, r.Error, st, e, h.transcript(id))
	}
	return r
}

// lastNotice is the notice of conversation id's last message.
func (h *harness) lastNotice(id int64) string {
	msgs := h.transcript(id)
	if len(msgs) == 0 {
		return ""
	}
	return msgs[len(msgs)-1].Notice
}

var errBoom = errors.New("boom")
