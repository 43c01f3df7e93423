package process

import (
	"context"
	"errors"
	"fmt"

	"waymark/internal/access"
	"waymark/internal/fault"
	"waymark/internal/run"
	"waymark/internal/store"
)

// ErrNotFound answers an unknown run and a run the actor may not end alike.
var ErrNotFound = fault.New(fault.NotFound, "not_found", "not found")

// Ender ends processes (ADR-228 item 7).
type Ender struct {
	db       *store.DB
	dir      access.Directory
	runs     *run.Store
	lineages *Store
}

// NewEnder returns an Ender deciding for the users of dir (nil: the
// built-in directory).
func NewEnder(db *store.DB, dir access.Directory, runs *run.Store) *Ender {
	return &Ender{db: db, dir: access.OrBuiltin(dir), runs: runs, lineages: NewStore(runs)}
}

// mayEnd: the run's initiator or an administrator — never a service account
// or a mere holder of the approve grant.
func mayEnd(a *access.Actor, r run.Run) bool {
	return a.Active() && !a.ServiceAccount && (a.IsAdmin() || a.UID == r.Initiator)
}

// EndProcess ends the process the named run holds, as actor. A waiting run is
// cancelled through the guarded waiting-only transition; a queued or running
// run is left alone (ended false: ask again); a terminal run keeps its
// status. The origin records its lineage as released first — only when the
// actor may end the origin too — then the named run. A release that fails
// leaves the named run holding; a retry completes it. Anyone else, and an
// unknown run, learn nothing (ErrNotFound). A lineage of the run or of its
// origin that cannot be decoded is an error wrapping ErrUnreadable, returned
// before anything changed.
func (e *Ender) EndProcess(ctx context.Context, actor int64, id string) (bool, run.Status, error) {
	a, err := access.LoadActor(ctx, e.dir, e.db, actor)
	if errors.Is(err, access.ErrNoUser) {
		return false, "", ErrNotFound
	}
	if err != nil {
		return false, "", err
	}
	r, err := e.runs.Get(ctx, id)
	if errors.Is(err, run.ErrNotFound) || (err == nil && !mayEnd(a, r)) {
		return false, "", ErrNotFound
	}
	if err != nil {
		return false, "", err
	}
	l, ok, err := e.lineages.Latest(ctx, id)
	if err != nil {
		return false, r.Status, fmt.Errorf("end process of %s: %w", id, err)
	}
	if !ok || !l.Holds() {
		return false, r.Status, nil
	}
	// An origin whose lineage cannot be read refuses before anything
	// changes (fail closed): the run is not cancelled, nothing is released.
	if l.Origin != id {
		if _, _, err := e.lineages.Latest(ctx, l.Origin); err != nil {
			return false, r.Status, fmt.Errorf("end process of %s: origin %s: %w", id, l.Origin, err)
		}
	}
	switch {
	case r.Status.Waiting():
		won, err := e.runs.CancelIfWaiting(ctx, id)
		if err != nil {
			return false, r.Status, err
		}
		if !won {
			cur, err := e.runs.Get(ctx, id)
			if err != nil {
				return false, r.Status, err
			}
			if !cur.Status.Terminal() {
				return false, cur.Status, nil // someone released it meanwhile: ask again
			}
			r = cur
		} else {
			r.Status = run.StatusCancelled
			if _, err := e.runs.AppendEvent(ctx, id, run.EventStatus, map[string]any{"status": run.StatusCancelled,
				"reason": run.ReasonCancelled, "cancelledBy": actor, "endProcess": true}, run.PrivacyMetadata); err != nil {
				return false, r.Status, err
			}
		}
	case !r.Status.Terminal():
		return false, r.Status, nil // queued or running: left alone
	}
	if l.Origin != "" && l.Origin != id {
		if err := e.releaseOrigin(ctx, a, l.Origin); err != nil {
			return false, r.Status, err
		}
	}
	l.Released = true
	if err := e.lineages.Append(ctx, id, l); err != nil {
		return false, r.Status, fmt.Errorf("release %s: %w", id, err)
	}
	return true, r.Status, nil
}

// releaseOrigin records the origin's lineage as released when the actor may end it too.
func (e *Ender) releaseOrigin(ctx context.Context, a *access.Actor, origin string) error {
	o, err := e.runs.Get(ctx, origin)
	if errors.Is(err, run.ErrNotFound) {
		return nil // an origin that no longer exists ends the process for every turn
	}
	if err != nil {
		return err
	}
	if !mayEnd(a, o) {
		return nil // only the named run lets go
	}
	ol, ok, err := e.lineages.Latest(ctx, origin)
	if err != nil {
		return fmt.Errorf("lineage of origin %s: %w", origin, err)
	}
	if !ok || ol.Released {
		return nil
	}
	ol.Released = true
	return e.lineages.Append(ctx, origin, ol)
}
