package agent_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/content"
	"waymark/internal/llm"
	"waymark/internal/llm/script"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// instantModel answers the standard shape at once: read the page, propose
// one write, finish. It stands in for the script provider in benchmarks.
var instantModel = script.Func(func(ctx context.Context, req llm.Request) (llm.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	page := strings.TrimPrefix(req.Messages[0].Content, "Improve page ")
	if req.Messages[0].Role == llm.RoleSystem {
		page = strings.TrimPrefix(req.Messages[1].Content, "Improve page ")
	}
	var msg llm.Message
	switch {
	case last.Role == llm.RoleUser:
		msg.ToolCalls = []llm.ToolCall{{ID: "c1", Name: "read_page", Arguments: `{"page":` + page + `}`}}
	case strings.Contains(last.Content, `"page"`) && !strings.Contains(last.Content, "written"):
		msg.ToolCalls = []llm.ToolCall{{ID: "c2", Name: "update_page_metadata",
			Arguments: fmt.Sprintf(`{"page":%s,"fields":{"description":%q}}`, page, description+fmt.Sprint(time.Now().UnixNano()))}}
	default:
		msg.Content = "done"
	}
	msg.Role = llm.RoleAssistant
	return llm.Response{Message: msg, Usage: llm.Usage{PromptTokens: 50, CompletionTokens: 10}}, nil
})

// benchEnv is setup on a file SQLite database with the instant model.
func benchEnv(b *testing.B) *env {
	b.Helper()
	return benchEnvAt(b, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"))
}

// benchEnvAt is benchEnv on the database at url (opened with the defaults,
// as the service opens it).
func benchEnvAt(b *testing.B, url string) *env {
	b.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	t := &testing.T{}
	e := setup(t, db, false)
	e.providers = func(context.Context, llmconfig.Configuration) (llm.Provider, error) {
		return instantModel, nil
	}
	e.cfg = agent.Config{Clock: e.clk, MaxOpenRuns: 1 << 30} // the cap is not what is measured
	e.rt = e.runtime(b, e.cfg)
	for uid := int64(2); uid <= 64; uid++ {
		if err := content.PutTx(context.Background(), db, content.Record{Table: "pages", UID: uid, PID: 1, Owner: erika, Group: 1,
			Perms: content.Perms{User: 31, Group: 27}, Fields: map[string]string{"title": fmt.Sprint("Page ", uid)}}, 0); err != nil {
			b.Fatal(err)
		}
	}
	return e
}

// BenchmarkApprovalCycleParallel runs whole cycles from two goroutines per
// core (each on its own page), as an API serving several editors would.
func BenchmarkApprovalCycleParallel(b *testing.B) {
	e := benchEnv(b)
	ctx := context.Background()
	base := baseline(b, e.db, 2000)
	var next atomic.Int64
	commits0 := e.db.Commits()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		page := next.Add(1) + 1
		req := agent.Request{Configuration: cfgPlain, Messages: user(fmt.Sprint("Improve page ", page))}
		for pb.Next() {
			res, err := e.rt.Run(ctx, erika, req)
			if err != nil {
				b.Fatal(err)
			}
			s, err := e.rt.Status(ctx, erika, res.UUID)
			if err != nil || s.Pending == nil {
				b.Fatalf("not waiting: %+v %v", s, err)
			}
			if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest}); err != nil {
				b.Fatal(err)
			}
		}
	})
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "cycles/s")
	b.ReportMetric(float64(e.db.Commits()-commits0)/float64(b.N), "commits/cycle")
	b.ReportMetric(float64(time.Second/base), "baseline_commits/s")
}

// baseline measures an empty one-row commit on the same database.
func baseline(b *testing.B, db *store.DB, n int) time.Duration {
	ctx := context.Background()
	create := "CREATE TABLE IF NOT EXISTS bench_baseline (id INTEGER PRIMARY KEY, v BIGINT)"
	if db.Dialect() == store.Postgres {
		create = "CREATE TABLE IF NOT EXISTS bench_baseline (id BIGSERIAL PRIMARY KEY, v BIGINT)"
	}
	if _, err := db.Exec(ctx, create); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO bench_baseline (v) VALUES (?)", i)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start) / time.Duration(n)
}

// BenchmarkApprovalCycle: start → read → suspend on a write → approve → write → complete,
// interactively, with a model that answers at once, on SQLite and on
// PostgreSQL (WAYMARK_TEST_POSTGRES; skipped without it). Reports cycles/s,
// commits/cycle, statements/cycle, ms/round (runtime overhead per model
// round), the raw commit baseline of the same database and the cycle's time
// in empty commits (cycle/commit_ratio).
func BenchmarkApprovalCycle(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { approvalCycle(b, benchEnv(b)) })
	b.Run("postgres", func(b *testing.B) { approvalCycle(b, benchEnvAt(b, storetest.PostgresURL(b))) })
}

func approvalCycle(b *testing.B, e *env) {
	ctx := context.Background()
	base := baseline(b, e.db, 2000)
	req := agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")}
	commits0, stmts0 := e.db.Commits(), e.db.Statements()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		res, err := e.rt.Run(ctx, erika, req)
		if err != nil {
			b.Fatal(err)
		}
		s, err := e.rt.Status(ctx, erika, res.UUID)
		if err != nil || s.Pending == nil {
			b.Fatalf("not waiting: %+v %v", s, err)
		}
		if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest}); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	b.StopTimer()
	commits := float64(e.db.Commits()-commits0) / float64(b.N)
	b.ReportMetric(float64(b.N)/el.Seconds(), "cycles/s")
	b.ReportMetric(commits, "commits/cycle")
	b.ReportMetric(float64(e.db.Statements()-stmts0)/float64(b.N), "statements/cycle")
	b.ReportMetric(float64(el.Microseconds())/1000/float64(b.N)/3, "ms/round")
	b.ReportMetric(float64(time.Second/base), "baseline_commits/s")
	b.ReportMetric(float64(el/time.Duration(b.N))/float64(base), "cycle/commit_ratio")
}

// BenchmarkRound measures the runtime's own time per model round, median, by
// timing the rounds of many cycles (everything but the instant model).
func BenchmarkRound(b *testing.B) {
	e := benchEnv(b)
	ctx := context.Background()
	base := baseline(b, e.db, 2000)
	var mu sync.Mutex
	var rounds []time.Duration
	last := time.Now()
	timed := script.Func(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		mu.Lock()
		rounds = append(rounds, time.Since(last))
		mu.Unlock()
		resp, err := instantModel(ctx, req)
		last = time.Now()
		return resp, err
	})
	rt, err := agent.New(agent.Deps{DB: e.db, Runs: e.runs, Configs: e.configs, Tools: e.tools,
		Providers: func(context.Context, llmconfig.Configuration) (llm.Provider, error) { return timed, nil }},
		&agent.Config{Clock: e.clk})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		last = time.Now()
		res, err := rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		if err != nil {
			b.Fatal(err)
		}
		s, _ := rt.Status(ctx, erika, res.UUID)
		last = time.Now()
		if _, err := rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(rounds)
	med := rounds[len(rounds)/2]
	b.ReportMetric(float64(med.Microseconds())/1000, "ms/round_median")
	b.ReportMetric(float64(base.Microseconds())/1000, "ms/baseline_commit")
}

// BenchmarkQueuedRun: the same shape through the River queue (riversqlite),
// two workers: enqueue → pickup → read → suspend → approve → write → complete.
func BenchmarkQueuedRun(b *testing.B) {
	e := benchEnv(b)
	ctx := context.Background()
	base := baseline(b, e.db, 2000)
	e.withQueue(b, 4)
	req := agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")}
	b.ResetTimer()
	start := time.Now()
	ids := make([]string, b.N)
	for i := range ids {
		req.Messages = user(fmt.Sprint("Improve page ", i%63+2))
		id, err := e.rt.Enqueue(ctx, erika, req)
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = id
	}
	for _, id := range ids {
		for {
			r, err := e.runs.Get(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			if r.Status == run.StatusWaitingForApproval {
				break
			}
			if r.Status.Terminal() {
				b.Fatalf("run %s ended %s/%s", id, r.Status, r.ErrorMessage)
			}
			time.Sleep(time.Millisecond)
		}
		for {
			s, _ := e.rt.Status(ctx, erika, id)
			_, err := e.rt.Approve(ctx, erika, id, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest})
			if errors.Is(err, agent.ErrPreviewChanged) {
				continue // another run wrote the page meanwhile: approve what the card shows now
			}
			if err != nil {
				b.Fatal(err)
			}
			break
		}
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "runs/s")
	b.ReportMetric(float64(time.Second/base), "baseline_commits/s")
}
