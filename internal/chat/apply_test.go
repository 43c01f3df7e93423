package chat

import (
	"context"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/clock"
	"waymark/internal/run"
	"waymark/internal/store"
)

// claimingRuntime answers Status with a run waiting for the card digest
// "d1", after running claim once: what an editor's answer does while a
// result of the run is being applied.
type claimingRuntime struct {
	Runtime
	claim func()
}

func (rt *claimingRuntime) Status(ctx context.Context, actor int64, id string) (agent.Status, error) {
	if rt.claim != nil {
		rt.claim()
		rt.claim = nil
	}
	return agent.Status{UUID: id, Status: run.StatusWaitingForApproval,
		Pending: &agent.Pending{Kind: "approval", TurnDigest: "d1", Answers: "approval"}}, nil
}

// A result applied to the processing it was meant for lands only on that
// processing (the crash proof: a turn's result, applied late by a recovery
// that had read the conversation while its turn was lost, found it settled
// with the run's card by another process, then took back the editor's
// answer claimed on that card meanwhile — the card came back, the editor's
// second answer was refused stale_card, and a denied_elsewhere notice stood
// for their own skip). The editor's claim holds, both when it lands before
// the result is applied and when the conversation was settled already.
func TestALateResultOfALostTurnDoesNotTakeBackAnAnswerClaimedSince(t *testing.T) {
	eachDB(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const turnAt, settledAt, claimAt = 1, 2, 3
		card := `{"turnDigest":"d1","answers":["approve","cancel"],"approveBlocked":"","calls":[]}`
		var id int64
		if err := db.QueryRow(ctx, `INSERT INTO conversations (owner_uid, configuration_uid, page_uid, language, status, pending_run_uuid, card, created_at, updated_at)
			VALUES (2, 1, 1, 0, 'awaiting_approval', 'run-1', ?, 1, ?) RETURNING id`, card, settledAt).Scan(&id); err != nil {
			t.Fatal(err)
		}
		rt := &claimingRuntime{claim: func() {
			// The editor answers the card: awaiting → processing, the card kept.
			if _, err := db.Exec(ctx, "UPDATE conversations SET status = 'processing', updated_at = ? WHERE id = ? AND status = 'awaiting_approval'", claimAt, id); err != nil {
				t.Error(err)
			}
		}}
		s := New(Deps{DB: db, Runtime: rt}, &Config{Clock: clock.NewFake(time.Now())})
		defer s.Close()
		// The turn's result, for the processing at turnAt, read by a recovery
		// before another process settled the conversation.
		s.settle.applyWith(ctx, id, time.UnixMicro(turnAt), "run-1", "", nil, nil)
		r, err := getRow(ctx, db, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != Processing || r.UpdatedAt.UnixMicro() != claimAt || r.Decided == nil || r.Decided.TurnDigest != "d1" {
			t.Fatalf("after the late result: status %v at %d, decided %+v; want the editor's claim (processing at %d) untouched",
				r.Status, r.UpdatedAt.UnixMicro(), r.Decided, claimAt)
		}
		// A result meant for no processing in particular (zero: as it is now)
		// finds the conversation settled since and leaves it as it is: it
		// does not wait for a claim to land on.
		if _, err := db.Exec(ctx, "UPDATE conversations SET status = 'awaiting_approval', updated_at = ? WHERE id = ?", settledAt, id); err != nil {
			t.Fatal(err)
		}
		rt.claim = func() {
			if _, err := db.Exec(ctx, "UPDATE conversations SET status = 'processing', updated_at = ? WHERE id = ? AND status = 'awaiting_approval'", claimAt+1, id); err != nil {
				t.Error(err)
			}
		}
		s.settle.applyWith(ctx, id, time.Time{}, "run-1", "", nil, nil)
		if r, err = getRow(ctx, db, id); err != nil {
			t.Fatal(err)
		}
		if claimed := r.Status == Processing && r.UpdatedAt.UnixMicro() == claimAt+1; !claimed && (r.Status != AwaitingApproval || r.UpdatedAt.UnixMicro() != settledAt) {
			t.Fatalf("after a result applied as it is now: status %v at %d; want it as settled (at %d) or the editor's claim (at %d)",
				r.Status, r.UpdatedAt.UnixMicro(), settledAt, claimAt+1)
		}
	})
}
