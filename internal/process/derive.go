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
// back from refused runs to the last run that ran (item 4). It sets a.know,
// and a.carried and a.lastRan when a process is held. A refusal is returned
// as recorded by a.refuse; a failed store read as a plain error.
//
// A refused run is one settled with RefusedClass (or one whose lineage was
// carried from another run); one refused at resume holds the lineage it
// started with and counts as a run that ran. Its lineage names where to go on: carriedFrom,
// or for a lineage without a pin that could not read the process, its
// predecessor; a run refused because it could not store its lineage has
// none and goes on from the predecessor its request names. Any other
// refused run without a lineage, or one with a released lineage
// (pin_withdrawn, or a process ended through it), hands on nothing. Every
// run passed must be terminal.
func (a *attempt) derive(ctx context.Context) error {
	seen := map[string]bool{a.prep.Run.UUID: true}
	pinless := 0
	for cur := a.prep.Predecessor; ; {
		if seen[cur] {
			return a.refuse(LineageUnreadable, false, "the lineage names run "+cur+" twice")
		}
		seen[cur] = true
		r, err := a.runs.Get(ctx, cur)
		if errors.Is(err, run.ErrNotFound) {
			return a.letGo(DroppedPredecessorGone)
		}
		if err != nil {
			return fmt.Errorf("predecessor %s: %w", cur, err)
		}
		// Only the initiator or an administrator may continue a run; any
		// other run answers as one that does not exist.
		if r.Initiator != a.actor.UID && !a.actor.IsAdmin() {
			return a.letGo(DroppedPredecessorGone)
		}
		l, ok, err := a.lineages.Latest(ctx, cur)
		if errors.Is(err, ErrUnreadable) {
			return a.refuse(LineageUnreadable, false, "run "+cur)
		}
		if err != nil {
			return err
		}
		// A refused run whose lineage is its own — it holds its pin and was
		// carried from nowhere — ran: it was refused at resume (a process
		// turn whose configuration turned four-eyes on since, settled
		// approval_denied), after its start. A refusal does not end the
		// process: it is the last run that ran, like any other.
		ranThenRefused := ok && l.Holds() && l.CarriedFrom == ""
		if (r.ErrorClass == RefusedClass && !ranThenRefused) || (ok && l.CarriedFrom != "") {
			if !r.Status.Terminal() {
				return a.refuse(PredecessorNotFinished, false, "run "+cur+" is "+string(r.Status))
			}
			switch {
			case !ok && r.ErrorMessage == string(LineageUnreadable):
				// Refused because its lineage could not be stored: it has
				// none, and the process is not let go for that. It goes on
				// from the predecessor its opening request names (stored at
				// every privacy level), as a lineage without a pin would.
				pred, err := a.openingPredecessor(ctx, cur)
				if err != nil {
					return err
				}
				if pred == "" {
					a.know = none
					return nil
				}
				if pinless++; pinless > MaxPinlessRefusals {
					return a.letGo(DroppedRefusedTooOften)
				}
				cur = pred
			case !ok || l.Released:
				// No lineage: its predecessor held no process. Released: the
				// pin was withdrawn, or the process was ended through this run.
				a.know = none
				return nil
			case l.CarriedFrom != "":
				pinless, cur = 0, l.CarriedFrom
			case l.Pin == nil && l.Predecessor != "":
				if pinless++; pinless > MaxPinlessRefusals {
					return a.letGo(DroppedRefusedTooOften)
				}
				cur = l.Predecessor
			default:
				a.know = none
				return nil
			}
			continue
		}
		// cur is the last run that ran.
		if !ok && !r.Status.Terminal() {
			undecided, err := a.undecided(ctx, r)
			if err != nil {
				return err
			}
			if undecided {
				return a.refuse(PredecessorNotFinished, false, "run "+cur+" is "+string(r.Status)+" and has not decided its process")
			}
		}
		if !ok || !l.Holds() {
			a.know = none
			return nil
		}
		holds := true
		if l.Origin != cur {
			holds, err = a.Holds(ctx, l.Origin)
			if errors.Is(err, ErrUnreadable) {
				a.know, a.carried = held, l
				return a.refuse(LineageUnreadable, false, "origin "+l.Origin)
			}
			if err != nil {
				return err
			}
		}
		if !holds {
			a.know = none // the process was ended (item 7)
			return nil
		}
		a.know, a.carried, a.lastRan = held, l, r
		if !r.Status.Terminal() {
			return a.refuse(PredecessorNotFinished, false, "run "+cur+" is "+string(r.Status))
		}
		return nil
	}
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
