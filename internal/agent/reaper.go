package agent

import (
	"context"
	"log/slog"

	"waymark/internal/clock"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
)

// Reaper reaps and recovers: runs whose lease expired are requeued or
// settled, stranded runs and resume jobs are rescued, and a stopping
// process releases the runs it still holds (reap.go).
type Reaper struct {
	runs    *run.Store
	configs *llmconfig.Store
	queue   Enqueuer // may be nil: what would be requeued is settled
	clk     clock.Clock
	log     *slog.Logger
	cfg     Config
}

// reaping is the reaper pass a segment asks for when it hands its run back.
type reaping interface {
	Reap(ctx context.Context) (ReapReport, error)
}

var _ reaping = (*Reaper)(nil)

func newReaper(d Deps, c Config) *Reaper {
	return &Reaper{runs: d.Runs, configs: d.Configs, queue: c.Queue, clk: c.Clock, log: c.Logger, cfg: c}
}
