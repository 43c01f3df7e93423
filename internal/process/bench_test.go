package process_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/clock"
	"waymark/internal/fixture"
	"waymark/internal/llmconfig"
	"waymark/internal/process"
	"waymark/internal/run"
	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// bench is setup for a benchmark: the site on a SQLite file, and a finished
// start of seo on page 1 by erika (a provider call sent, so a continuation
// is not admitted again).
type bench struct {
	env
	start string // the finished start run
}

func newBench(b *testing.B) *bench {
	b.Helper()
	ctx := context.Background()
	db := storetest.SQLite(b)
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	doc, err := fixture.Decode([]byte(site), "site.yaml")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := fixture.ImportTx(ctx, db, clk.Now(), &fixture.Options{ToolNames: toolNames}, doc); err != nil {
		b.Fatal(err)
	}
	configs := llmconfig.New(db, nil, nil)
	sk, err := skill.NewStore(db, func(n string) bool { return slices.Contains(toolNames, n) }, configs,
		&skill.Config{Clock: clk, AdmissionFloor: skill.Community})
	if err != nil {
		b.Fatal(err)
	}
	runs := run.NewStore(db, clk)
	bn := &bench{env: env{db: db, clk: clk, runs: runs, skills: sk, configs: configs, lineages: process.NewStore(runs),
		prep: process.NewPreparer(db, nil, nil, runs, sk, access.NewChecker(db, nil, nil))}}
	id, p, err := bn.prepare(b, cfgChat, agent.Preparation{Invocation: &agent.Invocation{Skill: seo, Subject: page(1, 0)}}, true)
	if err != nil || p.Process == nil {
		b.Fatalf("start = %+v, %v; want a process", p, err)
	}
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		return runs.FlushTx(ctx, tx, id, run.Flush{Usage: run.Usage{Iterations: 1}, Privacy: run.PrivacyNone})
	}); err != nil {
		b.Fatal(err)
	}
	bn.finish(b, id, "", "")
	bn.start = id
	return bn
}

// newRun creates a running run of erika on cfg.
func (bn *bench) newRun(b *testing.B, cfg int64) run.Run {
	b.Helper()
	ctx := context.Background()
	id := uuid.NewString()
	if err := bn.runs.Create(ctx, run.Run{UUID: id, Configuration: cfg, Initiator: erika, Status: run.StatusRunning,
		LeaseOwner: "seg-" + id, LeaseExpiresAt: bn.clk.Now().Add(time.Minute)}); err != nil {
		b.Fatal(err)
	}
	r, err := bn.runs.Get(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// prepare prepares a new run of erika on cfg; store says whether the emitted
// events are stored (as the runtime's boundary would) or dropped.
func (bn *bench) prepare(b *testing.B, cfg int64, prep agent.Preparation, stored bool) (string, agent.Prepared, error) {
	b.Helper()
	ctx := context.Background()
	prep.Run = bn.newRun(b, cfg)
	c, err := bn.configs.Get(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	prep.Config, prep.ConfigFound = c, true
	p, err := bn.prep.Prepare(ctx, prep, func(kind run.Kind, payload any) {
		if !stored {
			return
		}
		if _, err := bn.runs.AppendEvent(ctx, prep.Run.UUID, kind, payload, run.PrivacyNone); err != nil {
			b.Fatalf("emit %s: %v", kind, err)
		}
	})
	return prep.Run.UUID, p, err
}

// finish settles a run completed, or failed with class and msg.
func (bn *bench) finish(b *testing.B, id, class, msg string) {
	b.Helper()
	status, reason := run.StatusCompleted, run.ReasonCompleted
	if class != "" {
		status, reason = run.StatusFailed, run.ReasonPolicyDenied
	}
	if won, err := bn.runs.Settle(context.Background(), id, run.Settlement{Owner: "seg-" + id, Status: status, Reason: reason, ErrClass: class, ErrMsg: msg}); err != nil || !won {
		b.Fatalf("settle %s = %v, %v", id, won, err)
	}
}

// measureContinuations times b.N Prepare calls, each continuing pred on a
// new run row made with the timer stopped, and reports the median beside an
// empty transaction's.
func (bn *bench) measureContinuations(b *testing.B, pred string) {
	ctx := context.Background()
	c, err := bn.configs.Get(ctx, cfgChat)
	if err != nil {
		b.Fatal(err)
	}
	var emitted int
	emit := func(run.Kind, any) { emitted++ }
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		r := bn.newRun(b, cfgChat)
		b.StartTimer()
		t0 := time.Now()
		p, err := bn.prep.Prepare(ctx, agent.Preparation{Run: r, Config: c, ConfigFound: true, Predecessor: pred}, emit)
		ds = append(ds, time.Since(t0))
		if err != nil || p.Process == nil || p.Process.Origin != bn.start {
			b.Fatalf("continuation = %+v, %v; want the process of %s", p.Process, err, bn.start)
		}
	}
	b.StopTimer()
	if emitted != b.N {
		b.Fatalf("emitted %d events for %d continuations, want one lineage each", emitted, b.N)
	}
	b.ReportMetric(ms(median(ds)), "ms/median")
	b.ReportMetric(ms(bn.emptyTx(b)), "ms/empty_tx")
}

// emptyTx is the median of 1000 empty transactions on the same database.
func (bn *bench) emptyTx(b *testing.B) time.Duration {
	ctx := context.Background()
	ds := make([]time.Duration, 1000)
	for i := range ds {
		t0 := time.Now()
		if err := bn.db.InTx(ctx, func(*store.Tx) error { return nil }); err != nil {
			b.Fatal(err)
		}
		ds[i] = time.Since(t0)
	}
	return median(ds)
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkPrepareContinuation times the preparer with lineage derivation
// for a continuation of a finished start (target: median under 1 ms).
func BenchmarkPrepareContinuation(b *testing.B) {
	bn := newBench(b)
	bn.measureContinuations(b, bn.start)
}

// BenchmarkFollow32RefusedRuns times a continuation that follows 32 refused
// pinless continuations back to the last run that ran (target: median under
// 10 ms).
func BenchmarkFollow32RefusedRuns(b *testing.B) {
	bn := newBench(b)
	pred := bn.start
	for range process.MaxPinlessRefusals {
		// Refused before it read the process: a lineage without a pin naming pred.
		id, _, err := bn.prepare(b, cfgAdmins, agent.Preparation{Predecessor: pred}, true)
		if refusal(err) != process.ConfigurationDenied {
			b.Fatalf("refused link = %v, want configuration_denied", err)
		}
		bn.finish(b, id, process.RefusedClass, string(process.ConfigurationDenied))
		pred = id
	}
	bn.measureContinuations(b, pred)
}
