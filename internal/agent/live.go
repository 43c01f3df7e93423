package agent

import (
	"context"
	"encoding/json"

	"waymark/internal/run"
)

// Live is what a client shows of a run under way: the latest progress and
// highlight it reported (nil when none). It is the part of Status a
// conversation polled during a turn needs, without the lineage, notices and
// card that Status reads too (the poll of a turn under way cost
// most of a `waymark bench` answer). Unknown and invisible runs are
// ErrNotFound, as for Status.
func (rt *Reader) Live(ctx context.Context, actor int64, id string) (progress, highlight map[string]any, err error) {
	ctx, end := rt.db.ReadScope(ctx)
	defer end()
	if _, _, _, err := rt.visibleRun(ctx, actor, id); err != nil {
		return nil, nil, err
	}
	evs, err := rt.runs.EventsOfKinds(ctx, id, run.EventProgress, run.EventHighlight)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range evs { // the latest of each counts
		var p map[string]any
		if json.Unmarshal(e.Payload, &p) != nil {
			continue
		}
		if e.Kind == run.EventProgress {
			progress = p
		} else {
			highlight = p
		}
	}
	return progress, highlight, nil
}
