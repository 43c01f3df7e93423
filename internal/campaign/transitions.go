package campaign

import (
	"context"
	"strings"

	"waymark/internal/store"
)

// State is a campaign's state.
type State string

// The campaign states.
const (
	Running   State = "running"
	Paused    State = "paused"
	Cancelled State = "cancelled"
	Done      State = "done" // every item left pending and running
	// BudgetReached: the campaign's tours cost its budget; no further page
	// was started and the pages not started are skipped (reason
	// "budget_reached"). Its cards stay answerable; the state is final.
	BudgetReached State = "budget_reached"
)

// Event names a change of a campaign's state.
type Event string

// The campaign events.
const (
	EventPause  Event = "pause"
	EventResume Event = "resume"
	EventCancel Event = "cancel"
	EventFinish Event = "finish" // the work found no item pending or running
	// EventBudget: the work found the campaign's cost at its budget and no
	// tour of it running.
	EventBudget Event = "budget"
)

// transition is one row of the state machine: the states an event may
// leave and the state it enters. Only the state and updated_at change.
type transition struct {
	from []State
	to   State
}

// transitions is the campaign's state machine, in one table.
var transitions = map[Event]transition{
	EventPause:  {from: []State{Running}, to: Paused},
	EventResume: {from: []State{Paused}, to: Running},
	EventCancel: {from: []State{Running, Paused}, to: Cancelled},
	EventFinish: {from: []State{Running}, to: Done},
	EventBudget: {from: []State{Running}, to: BudgetReached},
}

// fire applies ev to campaign id by one guarded UPDATE and reports whether
// it won; a loser changes nothing.
func fire(ctx context.Context, q store.Querier, id int64, ev Event, now int64) (bool, error) {
	t := transitions[ev]
	args := []any{string(t.to), now, id}
	marks := make([]string, len(t.from))
	for i, s := range t.from {
		marks[i] = "?"
		args = append(args, string(s))
	}
	res, err := q.Exec(ctx, "UPDATE campaigns SET state = ?, updated_at = ? WHERE id = ? AND state IN ("+strings.Join(marks, ", ")+")", args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ItemState is the state of one page (in one language) of a campaign.
type ItemState string

// The item states.
const (
	ItemPending   ItemState = "pending"
	ItemRunning   ItemState = "running"   // its tour was claimed and runs to its first card
	ItemProposals ItemState = "proposals" // its tour waits for an answer
	ItemSkipped   ItemState = "skipped"   // with a reason: never started
	ItemFailed    ItemState = "failed"    // with a reason: its tour failed
	ItemDone      ItemState = "done"      // its tour ended
)

// moveItem changes an item's state from one of from by one guarded UPDATE
// and reports whether it won.
func moveItem(ctx context.Context, q store.Querier, id int64, to ItemState, reason string, now int64, from ...ItemState) (bool, error) {
	args := []any{string(to), reason}
	set := "state = ?, reason = ?"
	switch to {
	case ItemRunning:
		set += ", started_at = ?"
		args = append(args, now)
	case ItemPending:
		set += ", started_at = 0"
	default:
		set += ", finished_at = ?"
		args = append(args, now)
	}
	args = append(args, id)
	marks := make([]string, len(from))
	for i, s := range from {
		marks[i] = "?"
		args = append(args, string(s))
	}
	res, err := q.Exec(ctx, "UPDATE campaign_items SET "+set+" WHERE id = ? AND state IN ("+strings.Join(marks, ", ")+")", args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
