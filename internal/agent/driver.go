package agent

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"waymark/internal/access"
	"waymark/internal/llm"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/tool"

	"github.com/google/uuid"
)

// Driver drives a segment: it holds the run's lease and renews it while it
// waits (segment.go, heartbeat.go), calls the model (stream.go), runs the
// tool loop (loop.go) and the process's gates (processloop.go), suspends
// for a decision (suspend.go) and stops its segments on Halt (halt.go).
type Driver struct {
	reaping
	db        *store.DB
	dir       access.Directory
	runs      *run.Store
	tools     *tool.Registry
	providers ProviderFunc
	queue     Enqueuer // may be nil
	log       *slog.Logger
	cfg       Config
	skills    Skills   // may be nil
	preparer  Preparer // may be nil
	// halted ends when Halt is called: the segments this runtime drives
	// stop at their next wait (detach).
	halted context.Context
	halt   context.CancelFunc
	// calls are the model calls under way in this process, by run (Draft).
	calls sync.Map
}

// driving is what the Starter and the Decider ask of the Driver: a
// segment, driven until it suspends or ends.
type driving interface {
	owner(kind string) string
	newSegment(r run.Run, owner string, cfg llmconfig.Configuration, queued bool) *segment
	detach(ctx context.Context) (_ context.Context, release func())
	drive(ctx context.Context, seg *segment, st *state) Result
	fault(ctx context.Context, seg *segment, err error, res Result) Result
	handBack(ctx context.Context, seg *segment, cause error)
	answer(seg *segment, st *state, c llm.ToolCall, res tool.Result)
	toolCall(seg *segment, st *state, c llm.ToolCall) tool.Call
	runRead(ctx context.Context, seg *segment, st *state, c llm.ToolCall) error
	pendingCalls(ctx context.Context, seg *segment, st *state, calls []llm.ToolCall, lang string) []pendingCall
	processHeld(ctx context.Context, st *state) (bool, string, error)
	processEnded(ctx context.Context, seg *segment, st *state) bool
}

var _ driving = (*Driver)(nil)

func newDriver(d Deps, c Config, r reaping) *Driver {
	halted, halt := context.WithCancel(context.Background())
	return &Driver{reaping: r, db: d.DB, dir: d.Directory, runs: d.Runs, tools: d.Tools, providers: d.Providers, queue: c.Queue,
		log: c.Logger, cfg: c, skills: c.Skills, preparer: c.Preparer, halted: halted, halt: halt}
}

// Lease is how long a segment holds a run between renewals.
func (rt *Driver) Lease() time.Duration { return rt.cfg.Lease }

// owner returns a fresh lease owner id naming the kind of segment.
func (rt *Driver) owner(kind string) string {
	return fmt.Sprintf("%s:%s:%s", kind, rt.cfg.Identity, uuid.NewString()[:8])
}
