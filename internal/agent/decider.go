package agent

import (
	"context"
	"log/slog"

	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// Decider carries out the decisions on suspended runs: approvals
// (approval.go, execution.go), submitted input (input.go), the same on a
// worker through a resume job (resume.go), cancellation (cancel.go), the
// recheck of a waiting run's skills (recheck.go) and the continuation of a
// decided turn whose worker died (continue.go). It drives the decided turn
// on through the Driver and answers through the Reader.
type Decider struct {
	driving
	reading
	db       *store.DB
	runs     *run.Store
	configs  *llmconfig.Store
	tools    *tool.Registry
	queue    Enqueuer // may be nil
	log      *slog.Logger
	cfg      Config
	skills   Skills   // may be nil
	preparer Preparer // may be nil
	// resumes are this process's requests waiting for their resume jobs.
	resumes resumeWaits
}

// deciding is what the Starter asks of the Decider: a queued run that
// holds a decided turn goes on from its decision.
type deciding interface {
	continueDecided(ctx context.Context, seg *segment) (Result, error)
}

var _ deciding = (*Decider)(nil)

func newDecider(d Deps, c Config, drv driving, rd reading) *Decider {
	return &Decider{driving: drv, reading: rd, db: d.DB, runs: d.Runs, configs: d.Configs, tools: d.Tools, queue: c.Queue,
		log: c.Logger, cfg: c, skills: c.Skills, preparer: c.Preparer}
}
