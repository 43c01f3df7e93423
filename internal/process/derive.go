package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"waymark/internal/agent"
	"waymark/internal/run"
)

// MaxPinlessRefusals is how many refusals in a row that could not read the
// process a continuation follows back; one more lets the process go with a
// refused_too_often notice (ADR-228 item 4).
const MaxPinlessRefusals = 32

// The reasons of the dropped_source notice a continuation emits when it lets
// the process go (uid 0: the notice names no skill).
const (
	DroppedPredecessorGone  = "predecessor_gone"
	DroppedRefusedTooOften  = "refused_too_often"
	noticeKindDroppedSource = "dropped_source"
)

// derive is check (b): it reads the process the predecessor hands on, going
// back from refused runs to the last run that ran (ADR-228 item 4). It sets
// a.know, and a.carried and a.lastRan when a process is held. A refusal is
// returned as recorded by a.refuse; a failed store read as a plain error.
// Its steps are the spec's:
//
//  1. read the predecessor and its latest lineage (readPredecessor: a gone
//     predecessor lets the process go, L4.6; an unreadable lineage refuses,
//     L4.5);
//  2. while it is a refused run, follow the name it records back
//     (followBack: it must be finished, L4.9; carriedFrom or the
//     predecessor of a lineage without a pin, L4.7 and L4.8; a released
//     lineage or none hands on nothing, L4.11; more than 32 refusals that
//     could not read the process let it go, L4.12);
//  3. apply the checks at the last run that ran (checkLastRan: it must be
//     finished and have decided its process, L4.9; it hands on its process
//     while its origin still holds it, item 7).
func (a *attempt) derive(ctx context.Context) error {
	w := &walk{seen: map[string]bool{a.prep.Run.UUID: true}}
	for cur := a.prep.Predecessor; ; {
		p, err := a.readPredecessor(ctx, w, cur)
		if p == nil || err != nil {
			return err
		}
		if !p.refused() {
			return a.checkLastRan(ctx, p)
		}
		if cur, err = a.followBack(ctx, w, p); cur == "" || err != nil {
			return err
		}
	}
}

// walk is what derive remembers on its way back.
type walk struct {
	seen    map[string]bool // the runs passed, the new run among them
	pinless int             // refusals in a row that could not read the process
}

// pinlessRefusal counts one more refusal that could not read the process
// and reports whether there are more than MaxPinlessRefusals in a row (L4.12).
func (w *walk) pinlessRefusal() bool {
	w.pinless++
	return w.pinless > MaxPinlessRefusals
}

// predecessor is a run derive passes, with its latest lineage (ok: it has one).
type predecessor struct {
	run     run.Run
	lineage Lineage
	ok      bool
}

// refused reports whether p is a refused run that derive passes on its way
// back (L4.7): one settled with RefusedClass, or one whose lineage was
// carried from another run. A refused run whose lineage is its own — it
// holds its pin and was carried from nowhere — ran: it was refused at
// resume (a process turn whose configuration turned four-eyes on since,
// settled approval_denied), after its start. A refusal does not end the
// process: it is the last run that ran, like any other.
func (p *predecessor) refused() bool {
	ranThenRefused := p.ok && p.lineage.Holds() && p.lineage.CarriedFrom == ""
	return (p.run.ErrorClass == RefusedClass && !ranThenRefused) || (p.ok && p.lineage.CarriedFrom != "")
}

// readPredecessor is step 1: it reads run cur and its latest lineage. A
// nil predecessor ends the walk: with the refusal as the error, or with the
// process let go (a predecessor that is gone, L4.6). A run named twice is
// an unreadable lineage; only the initiator or an administrator may
// continue a run, any other run answers as one that does not exist.
func (a *attempt) readPredecessor(ctx context.Context, w *walk, cur string) (*predecessor, error) {
	if w.seen[cur] {
		return nil, a.refuse(LineageUnreadable, false, "the lineage names run "+cur+" twice")
	}
	w.seen[cur] = true
	r, err := a.runs.Get(ctx, cur)
	if errors.Is(err, run.ErrNotFound) {
		return nil, a.letGo(DroppedPredecessorGone)
	}
	if err != nil {
		return nil, fmt.Errorf("predecessor %s: %w", cur, err)
	}
	if r.Initiator != a.actor.UID && !a.actor.IsAdmin() {
		return nil, a.letGo(DroppedPredecessorGone)
	}
	l, ok, err := a.lineages.Latest(ctx, cur)
	if errors.Is(err, ErrUnreadable) {
		return nil, a.refuse(LineageUnreadable, false, "run "+cur)
	}
	if err != nil {
		return nil, err
	}
	return &predecessor{run: r, lineage: l, ok: ok}, nil
}

// followBack is step 2 at the refused run p: it answers the run its
// lineage names to go on from, or "" when the walk ends here (with the
// refusal as the error, or a.know set). p must be finished (L4.9). Its
// lineage names where to go on: carriedFrom, or for a lineage without a
// pin, its predecessor (L4.7, L4.8); a run refused because it could not
// store its lineage has none and goes on from the predecessor its request
// names. Any other refused run without a lineage, or one with a released
// lineage (pin_withdrawn, or a process ended through it), hands on nothing
// (L4.11).
func (a *attempt) followBack(ctx context.Context, w *walk, p *predecessor) (string, error) {
	r, l, cur := p.run, p.lineage, p.run.UUID
	if !r.Status.Terminal() {
		return "", a.refuse(PredecessorNotFinished, false, "run "+cur+" is "+string(r.Status))
	}
	switch {
	case !p.ok && r.ErrorMessage == string(LineageUnreadable):
		// Refused because its lineage could not be stored: it has none, and
		// the process is not let go for that. It goes on from the
		// predecessor its opening request names (stored at every privacy
		// level), as a lineage without a pin would.
		pred, err := a.openingPredecessor(ctx, cur)
		if err != nil || pred == "" {
			return "", a.noProcess(err)
		}
		if w.pinlessRefusal() {
			return "", a.letGo(DroppedRefusedTooOften)
		}
		return pred, nil
	case !p.ok || l.Released:
		// No lineage: its predecessor held no process. Released: the pin
		// was withdrawn, or the process was ended through this run.
		return "", a.noProcess(nil)
	case l.CarriedFrom != "":
		w.pinless = 0
		return l.CarriedFrom, nil
	case l.Pin == nil && l.Predecessor != "":
		if w.pinlessRefusal() {
			return "", a.letGo(DroppedRefusedTooOften)
		}
		return l.Predecessor, nil
	}
	return "", a.noProcess(nil)
}

// checkLastRan is step 3 at the last run that ran, p: it hands on its
// process while its lineage holds a pin and its origin still does (item 7:
// an ended process is held by none of its turns). p must be finished
// (L4.9); one still running without a lineage refuses only when it was
// asked for a process it has not decided yet. An origin whose lineage
// cannot be read refuses (L4.5) with the process known held, so that the
// refusal carries it on (L4.7).
func (a *attempt) checkLastRan(ctx context.Context, p *predecessor) error {
	r, l, cur := p.run, p.lineage, p.run.UUID
	if !p.ok && !r.Status.Terminal() {
		undecided, err := a.undecided(ctx, r)
		if err != nil {
			return err
		}
		if undecided {
			return a.refuse(PredecessorNotFinished, false, "run "+cur+" is "+string(r.Status)+" and has not decided its process")
		}
	}
	if !p.ok || !l.Holds() {
		return a.noProcess(nil)
	}
	holds, err := a.originHolds(ctx, cur, l)
	if errors.Is(err, ErrUnreadable) {
		a.know, a.carried = held, l
		return a.refuse(LineageUnreadable, false, "origin "+l.Origin)
	}
	if err != nil {
		return err
	}
	if !holds {
		return a.noProcess(nil) // the process was ended (item 7)
	}
	a.know, a.carried, a.lastRan = held, l, r
	if !r.Status.Terminal() {
		return a.refuse(PredecessorNotFinished, false, "run "+cur+" is "+string(r.Status))
	}
	return nil
}

// originHolds reports whether the origin of lineage l, the latest of run
// cur, still holds the process (item 7); a run that is its own origin holds
// it by l.
func (a *attempt) originHolds(ctx context.Context, cur string, l Lineage) (bool, error) {
	if l.Origin == cur {
		return true, nil
	}
	return a.Holds(ctx, l.Origin)
}

// noProcess ends the walk with no process handed on, unless err (a failed
// read) ends it first.
func (a *attempt) noProcess(err error) error {
	if err != nil {
		return err
	}
	a.know = none
	return nil
}

// openingPredecessor is the predecessor run id's opening request event
// names ("" when it names none).
func (a *attempt) openingPredecessor(ctx context.Context, id string) (string, error) {
	evs, err := a.runs.Events(ctx, id, 0, 1)
	if err != nil {
		return "", fmt.Errorf("request of refused run %s: %w", id, err)
	}
	if len(evs) == 0 || evs[0].Kind != run.EventRequest {
		return "", nil
	}
	var p struct {
		Predecessor string `json:"predecessor"`
	}
	if json.Unmarshal(evs[0].Payload, &p) != nil {
		return "", nil
	}
	return p.Predecessor, nil
}

// undecided reports whether a run that is not terminal and has no lineage
// yet was asked with an invocation or a predecessor: its process is decided
// only when its preparation runs, so what it hands on is not known (L4.9).
// A request that cannot tell fails closed: undecided.
func (a *attempt) undecided(ctx context.Context, r run.Run) (bool, error) {
	var opening []byte
	if len(r.Request) == 0 {
		evs, err := a.runs.Events(ctx, r.UUID, 0, 1)
		if err != nil {
			return false, fmt.Errorf("request of predecessor %s: %w", r.UUID, err)
		}
		if len(evs) == 1 && evs[0].Kind == run.EventRequest {
			opening = evs[0].Payload
		}
	}
	asked, known := agent.AskedForProcess(r, opening)
	return asked || !known, nil
}

// letGo lets the process go with a dropped_source notice; the turn goes on
// without a process (an invocation it names starts anew).
func (a *attempt) letGo(reason string) error {
	a.emit(run.EventNotice, map[string]any{"kind": noticeKindDroppedSource, "reason": reason, "uid": 0})
	a.know = none
	return nil
}

// Holds reports whether a turn of the process that started at origin may
// still hand it on: the origin's latest lineage names a pin it has not
// released (ADR-228 item 7). An origin that no longer exists, or holds no
// lineage, holds nothing. A lineage that cannot be decoded is an error
// wrapping ErrUnreadable; a failed read any other error (callers fail closed).
func (p *Preparer) Holds(ctx context.Context, origin string) (bool, error) {
	l, ok, err := p.lineages.Latest(ctx, origin)
	if err != nil {
		return false, err
	}
	return ok && l.Holds(), nil
}

// Release records that the run let its process go: its latest lineage again,
// released (ADR-228 item 7). A run that holds no process (no lineage, one
// without a pin, or one released already) is left as it is. The append
// finishes once started, whatever happens to ctx; a failed release leaves the
// run holding and may be retried.
func (p *Preparer) Release(ctx context.Context, runUUID string) error {
	l, ok, err := p.lineages.Latest(ctx, runUUID)
	if err != nil {
		return fmt.Errorf("release process of run %s: %w", runUUID, err)
	}
	if !ok || !l.Holds() {
		return nil
	}
	l.Released = true
	if err := p.lineages.Append(context.WithoutCancel(ctx), runUUID, l); err != nil {
		return fmt.Errorf("release process of run %s: %w", runUUID, err)
	}
	return nil
}

// ProcessOf reads what the status of the run shows of its lineage (ADR-228
// item 7, L7.13): whether it holds a process — its latest lineage names a
// pin it has not released and the origin still holds — the process skill
// and the predecessor. A run without a lineage shows none. A lineage of the
// run or of its origin that cannot be decoded is an error wrapping
// ErrUnreadable; a failed read any other error.
func (p *Preparer) ProcessOf(ctx context.Context, runUUID string) (agent.ProcessView, error) {
	l, ok, err := p.lineages.Latest(ctx, runUUID)
	if err != nil || !ok {
		return agent.ProcessView{}, err
	}
	v := agent.ProcessView{Found: true, Skill: l.ProcessSkill, Predecessor: l.Predecessor}
	switch {
	case !l.Holds():
	case l.Origin == runUUID: // the run is its process's origin: l is the origin's latest lineage
		v.Holds = true
	default:
		if v.Holds, err = p.Holds(ctx, l.Origin); err != nil {
			return agent.ProcessView{}, err
		}
	}
	return v, nil
}
