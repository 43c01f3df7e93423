package agent

import (
	"context"
	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/store"
)

// Reader reads runs and their events as an actor may see them: a run's
// status, its events, the inbox, the run list and the live view
// (status.go, inbox.go, runlist.go, live.go, visibility.go). It writes
// nothing.
type Reader struct {
	db       *store.DB
	src      content.Source
	dir      access.Directory
	runs     *run.Store
	configs  *llmconfig.Store
	preparer Preparer // may be nil
}

// reading is what the Decider reads through the Reader.
type reading interface {
	visibleRun(ctx context.Context, actor int64, id string) (run.Run, *access.Actor, viewer, error)
	ownRun(ctx context.Context, actor int64, id string) (run.Run, *access.Actor, error)
	view(ctx context.Context, a *access.Actor, r run.Run, v viewer) Status
	withStatus(ctx context.Context, a *access.Actor, v viewer, res Result) Result
}

var _ reading = (*Reader)(nil)

func newReader(d Deps, c Config) *Reader {
	return &Reader{db: d.DB, src: d.Source, dir: d.Directory, runs: d.Runs, configs: d.Configs, preparer: c.Preparer}
}
