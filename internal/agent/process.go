package agent

import (
	"context"
	"encoding/json"
	"errors"

	"waymark/internal/content"
	"waymark/internal/fault"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/skill"
)

// Invocation asks a run to start a process skill on an optional subject
// record (ADR-228 item 1). It carries no pin: the runtime derives pins.
type Invocation struct {
	Skill   int64        `json:"skill"`
	Subject *content.Ref `json:"subject,omitempty"`
}

// Preparer runs the start checks of ADR-228 item 2 once a run has a row and
// an acting user — at an interactive start and again at worker pickup — and
// derives the run's process from its invocation or its predecessor
// (process.Preparer implements it). It records the run's lineage through
// emit. A refusal is an error implementing Refused.
type Preparer interface {
	Prepare(ctx context.Context, p Preparation, emit func(kind run.Kind, payload any)) (Prepared, error)
	// Holds reports whether a run of the lineage that started at origin may
	// still hand the process on (false once it was ended); an error fails closed.
	Holds(ctx context.Context, origin string) (bool, error)
	// Release records that the run let its process go (a completion report).
	Release(ctx context.Context, runUUID string) error
}

// Preparation is what the preparer checks.
type Preparation struct {
	Run         run.Run
	Config      llmconfig.Configuration
	ConfigFound bool // false: the configuration is unknown or inactive
	Invocation  *Invocation
	Predecessor string
	// RequestUnreadable: the stored request of a queued run cannot be
	// decoded (ADR-228 item 1). The preparer refuses the run as
	// request_unreadable; Predecessor is then the one its opening request
	// event names, if any, so the refusal records what a refused
	// continuation records and the process is not lost.
	RequestUnreadable bool
}

// Prepared is the preparer's answer: the process the run holds (nil: none).
type Prepared struct {
	Process *Hold
}

// Hold is a process held by a run: the pin, composed from its approval snapshot.
type Hold struct {
	Pin     skill.Pin     `json:"pin"`
	Section skill.Section `json:"section"`
	// Tools is the snapshot's declared tool list (nil: no declaration); it
	// joins the run's allow-list.
	Tools   []string     `json:"tools"`
	Subject *content.Ref `json:"subject,omitempty"`
	Skill   string       `json:"skill"`  // the process skill's identifier
	Origin  string       `json:"origin"` // the run that started the process
	// Admits: the process starts with this run (or its predecessor never
	// sent a provider call), so it passes the window admission (item 9).
	Admits bool `json:"admits"`
}

// ProcessView is what a run's status shows of its lineage (ADR-228 item 7).
type ProcessView struct {
	Found       bool   // the run has a lineage
	Holds       bool   // it holds a process whose origin still does
	Skill       string // the process skill's identifier
	Predecessor string // the run it continued
}

// LineageViewer is the optional ability of a preparer to read a run's
// lineage for its status (process.Preparer has it); an error (an unreadable
// lineage, of the run or of its origin, or a failed read) leaves
// holdsProcess null.
type LineageViewer interface {
	ProcessOf(ctx context.Context, runUUID string) (ProcessView, error)
}

// Refused is a refused invocation or continuation (process.RefusedError).
type Refused interface {
	error
	RefusalCase() string
	SecondApproverDenied() bool
}

// refusedNoPreparer answers every invocation and continuation of an executor built without a preparer.
type refusedNoPreparer struct{}

func (refusedNoPreparer) Error() string              { return "process invocation refused: no_preparer" }
func (refusedNoPreparer) RefusalCase() string        { return "no_preparer" }
func (refusedNoPreparer) SecondApproverDenied() bool { return false }

// refusedRequestUnreadable refuses a queued run whose stored request cannot
// be decoded, when there is no preparer to record its lineage.
type refusedRequestUnreadable struct{}

func (refusedRequestUnreadable) Error() string {
	return "process invocation refused: request_unreadable"
}
func (refusedRequestUnreadable) RefusalCase() string        { return "request_unreadable" }
func (refusedRequestUnreadable) SecondApproverDenied() bool { return false }

// refuseUnreadable settles a queued run whose stored request cannot be
// decoded as a refusal (L1.3): failed, policy_denied, request_unreadable —
// never run, never retried. The preparer records the lineage a refused
// continuation of the predecessor its opening request event names records.
func (rt *Starter) refuseUnreadable(ctx context.Context, seg *segment, cfgFound bool, cause error) {
	rt.log.Warn("stored request cannot be decoded; run refused", "run", seg.run.UUID, "err", cause)
	var refused Refused = refusedRequestUnreadable{}
	if rt.preparer != nil {
		pred := rt.openingPredecessor(ctx, seg.run.UUID)
		_, err := rt.preparer.Prepare(ctx, Preparation{Run: seg.run, Config: seg.cfg, ConfigFound: cfgFound,
			Predecessor: pred, RequestUnreadable: true}, seg.emit)
		if !errors.As(err, &refused) {
			refused = refusedRequestUnreadable{}
		}
	}
	rt.refuse(ctx, seg, refused)
}

// openingPredecessor is the predecessor the run's opening request event
// names ("" when it names none or cannot be read).
func (rt *Starter) openingPredecessor(ctx context.Context, id string) string {
	evs, err := rt.runs.Events(ctx, id, 0, 1)
	if err != nil || len(evs) == 0 {
		return ""
	}
	return predecessorOf(evs[0])
}

// predecessorOf is the predecessor a run's first event names when it is the
// opening request event ("" otherwise).
func predecessorOf(first run.Event) string {
	if first.Kind != run.EventRequest {
		return ""
	}
	var p struct {
		Predecessor string `json:"predecessor"`
	}
	if json.Unmarshal(first.Payload, &p) != nil || len(p.Predecessor) > 64 {
		return ""
	}
	return p.Predecessor
}

// refusedLineageUnstored refuses a run whose lineage cannot be stored (item
// 4): the case process.LineageUnreadable names, "the lineage cannot be read
// or stored".
type refusedLineageUnstored struct{}

func (refusedLineageUnstored) Error() string {
	return "process continuation refused: lineage_unreadable"
}
func (refusedLineageUnstored) RefusalCase() string        { return "lineage_unreadable" }
func (refusedLineageUnstored) SecondApproverDenied() bool { return false }

// ErrProcessEnded: the process of a waiting turn was ended; it does not resume.
var ErrProcessEnded = fault.New(fault.Conflict, "process_ended", "the process of this run was ended")

// prepare runs the preparer for a request that names an invocation or a predecessor.
func (rt *Starter) prepare(ctx context.Context, seg *segment, cfgFound bool, inv *Invocation, pred string) (Prepared, error) {
	if inv == nil && pred == "" {
		return Prepared{}, nil
	}
	if rt.preparer == nil {
		return Prepared{}, refusedNoPreparer{}
	}
	return rt.preparer.Prepare(ctx, Preparation{Run: seg.run, Config: seg.cfg, ConfigFound: cfgFound, Invocation: inv, Predecessor: pred},
		seg.emit)
}

// refuse settles a refused run: failed, policy_denied (approval_denied for a
// continued process on a configuration that turned four-eyes on), outside any retry.
func (rt *Starter) refuse(ctx context.Context, seg *segment, r Refused) {
	reason := run.ReasonPolicyDenied
	if r.SecondApproverDenied() {
		reason = run.ReasonApprovalDenied
	}
	seg.emit(run.EventNotice, map[string]any{"kind": "refusal", "refusal": r.RefusalCase()})
	if rt.cfg.ObserveRefusal != nil {
		rt.cfg.ObserveRefusal(r.RefusalCase())
	}
	_ = seg.settle(ctx, run.StatusFailed, reason, "process_invocation_refused", r.RefusalCase(), "")
}
