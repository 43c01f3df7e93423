package queue_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"waymark/internal/queue"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// insertOnly is a migrated queue without workers: its jobs stay available.
func insertOnly(t *testing.T, db *store.DB) *queue.Queue {
	t.Helper()
	q, err := queue.New(db, &queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return q
}

// The reaper asks the queue which queued runs lost their job:
// only runs whose job is gone or finished are listed, in the order
// asked, however many are asked at once.
func TestWithoutLiveJobListsTheRunsWhoseJobIsGone(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := insertOnly(t, db)
		for _, r := range []string{"run-a", "run-b"} {
			if err := q.InTx(ctx, func(tx *store.Tx) error { return q.InsertTx(ctx, tx, r, 0) }); err != nil {
				t.Fatal(err)
			}
		}
		long := time.Now().Add(-time.Hour) // no running job is older: none counts as lost
		got, err := q.WithoutLiveJob(ctx, []string{"run-c", "run-b", "run-a", "run-d"}, long)
		if err != nil || !slices.Equal(got, []string{"run-c", "run-d"}) {
			t.Fatalf("WithoutLiveJob = %v, %v; want [run-c run-d]", got, err)
		}
		// River discarded every job; run-b got a new one.
		if _, err := db.Exec(ctx, "DELETE FROM river_job"); err != nil {
			t.Fatal(err)
		}
		if err := q.InTx(ctx, func(tx *store.Tx) error { return q.InsertTx(ctx, tx, "run-b", 0) }); err != nil {
			t.Fatal(err)
		}
		many := []string{"run-b"}
		for i := range store.MaxInList + 10 {
			many = append(many, fmt.Sprintf("gone-%d", i))
		}
		many = append(many, "run-a")
		got, err = q.WithoutLiveJob(ctx, many, long)
		if err != nil || len(got) != len(many)-1 || slices.Contains(got, "run-b") || got[len(got)-1] != "run-a" {
			t.Fatalf("WithoutLiveJob of %d runs = %d runs (run-b listed: %v, last %q), %v; want all but run-b",
				len(many), len(got), slices.Contains(got, "run-b"), got[len(got)-1], err)
		}
	})
}

// A run job a worker took and never finished counts as lost once it was
// taken before heldSince (the caller's now minus a lease): the worker died
// between River's fetch and the run's claim, and River would rescue the job
// only after a day. Taken after heldSince, it is live.
func TestWithoutLiveJobCountsAJobTakenLongAgoAsLost(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := insertOnly(t, db)
		if err := q.InTx(ctx, func(tx *store.Tx) error { return q.InsertTx(ctx, tx, "run-a", 0) }); err != nil {
			t.Fatal(err)
		}
		taken := time.Now().Add(-time.Minute)
		if _, err := db.Exec(ctx, "UPDATE river_job SET state = 'running', attempt = 1, attempted_at = ?", taken.UTC()); err != nil {
			t.Fatal(err)
		}
		if got, err := q.WithoutLiveJob(ctx, []string{"run-a"}, taken.Add(-time.Second)); err != nil || len(got) != 0 {
			t.Errorf("a job taken after heldSince: WithoutLiveJob = %v, %v; want it live", got, err)
		}
		if got, err := q.WithoutLiveJob(ctx, []string{"run-a"}, taken.Add(time.Second)); err != nil || !slices.Equal(got, []string{"run-a"}) {
			t.Errorf("a job taken before heldSince: WithoutLiveJob = %v, %v; want [run-a]", got, err)
		}
	})
}

// A conversation's chat job counts as waiting until a worker takes it, then
// while the worker took it after heldSince, and only for that conversation;
// a field that is not a plain name is refused.
func TestChatJobWaitingSeesTheUnworkedJobOfThatConversation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := insertOnly(t, db)
		if err := q.InTx(ctx, func(tx *store.Tx) error {
			return q.InsertChatTx(ctx, tx, map[string]any{"conversation": 7, "op": "turn"})
		}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			conv int64
			want bool
		}{{7, true}, {8, false}} {
			if got, err := q.ChatJobWaiting(ctx, "conversation", c.conv, time.Now()); err != nil || got != c.want {
				t.Errorf("ChatJobWaiting(conversation, %d) = %v, %v; want %v", c.conv, got, err, c.want)
			}
		}
		if _, err := db.Exec(ctx, "UPDATE river_job SET state = 'running', attempt = 1, attempted_at = created_at"); err != nil {
			t.Fatal(err)
		}
		if got, err := q.ChatJobWaiting(ctx, "conversation", 7, time.Now().Add(time.Hour)); err != nil || got {
			t.Errorf("ChatJobWaiting of a job taken before heldSince = %v, %v; want false", got, err)
		}
		if got, err := q.ChatJobWaiting(ctx, "conversation", 7, time.Now().Add(-time.Hour)); err != nil || !got {
			t.Errorf("ChatJobWaiting of a job taken after heldSince = %v, %v; want true", got, err)
		}
		if _, err := q.ChatJobWaiting(ctx, "conversation') OR 1=1 --", 7, time.Now()); err == nil {
			t.Error("ChatJobWaiting with a field that is not a name: want an error")
		}
	})
}

// The reaper hands back a resume job a worker took before heldSince and left
// running, once: not one taken later, not one whose run busy says is being
// worked, and not one taken again meanwhile (its attempt moved).
func TestRescueStuckResumesHandsBackOnlyAJobLeftByItsWorker(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := insertOnly(t, db)
		for _, run := range []string{"run-idle", "run-busy"} {
			if err := q.InTx(ctx, func(tx *store.Tx) error {
				_, err := q.InsertResumeTx(ctx, tx, map[string]any{"run": run, "actor": 2})
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		taken := time.Now().Add(-time.Minute)
		if _, err := db.Exec(ctx, "UPDATE river_job SET state = 'running', attempt = 1, attempted_at = ?", taken.UTC()); err != nil {
			t.Fatal(err)
		}
		var asked []string
		busy := func(_ context.Context, run string) (bool, error) {
			asked = append(asked, run)
			return run == "run-busy", nil
		}
		if n, err := q.RescueStuckResumes(ctx, taken.Add(-time.Second), busy); err != nil || n != 0 || len(asked) != 0 {
			t.Errorf("jobs taken after heldSince: rescued %d, %v, asked about %v; want none", n, err, asked)
		}
		if n, err := q.RescueStuckResumes(ctx, taken.Add(time.Second), busy); err != nil || n != 1 {
			t.Errorf("jobs taken before heldSince: rescued %d, %v; want the idle run's job only", n, err)
		}
		type job struct{ args, state string }
		jobs, err := store.Collect(ctx, db, func(sc store.Scanner) (job, error) {
			var j job
			return j, sc.Scan(&j.args, &j.state)
		}, "SELECT args, state FROM river_job ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			want := map[bool]string{true: "running", false: "available"}[strings.Contains(j.args, "run-busy")]
			if j.state != want {
				t.Errorf("after the rescue the job %s is %s, want %s", j.args, j.state, want)
			}
		}
		// Handed back once: the next pass finds only the busy run's job.
		asked = nil
		if n, err := q.RescueStuckResumes(ctx, taken.Add(time.Second), busy); err != nil || n != 0 || !slices.Equal(asked, []string{"run-busy"}) {
			t.Errorf("a second pass rescued %d, %v, asked about %v; want none, asked about run-busy", n, err, asked)
		}
	})
}

// The chat's reaper hands back the chat job a worker took before heldSince
// and left running, only the one that carries the conversation's claim,
// once: not one taken later, not one of another claim or conversation.
func TestRescueChatJobHandsBackOnlyTheJobOfTheClaimLeftByItsWorker(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := insertOnly(t, db)
		for _, j := range []map[string]any{{"op": "decide", "conversation": 7, "at": 100}, {"op": "decide", "conversation": 7, "at": 50}, {"op": "decide", "conversation": 8, "at": 100}} {
			if err := q.InTx(ctx, func(tx *store.Tx) error { return q.InsertChatTx(ctx, tx, j) }); err != nil {
				t.Fatal(err)
			}
		}
		taken := time.Now().Add(-time.Minute)
		if _, err := db.Exec(ctx, "UPDATE river_job SET state = 'running', attempt = 1, attempted_at = ?", taken.UTC()); err != nil {
			t.Fatal(err)
		}
		if ok, err := q.RescueChatJob(ctx, 7, 100, taken.Add(-time.Second)); err != nil || ok {
			t.Errorf("a job taken after heldSince: rescued %v, %v; want not", ok, err)
		}
		if ok, err := q.RescueChatJob(ctx, 7, 100, taken.Add(time.Second)); err != nil || !ok {
			t.Errorf("the job of the claim taken before heldSince: rescued %v, %v; want it", ok, err)
		}
		type job struct{ args, state string }
		jobs, err := store.Collect(ctx, db, func(sc store.Scanner) (job, error) {
			var j job
			return j, sc.Scan(&j.args, &j.state)
		}, "SELECT args, state FROM river_job ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		for i, j := range jobs {
			want := map[bool]string{true: "available", false: "running"}[i == 0]
			if j.state != want {
				t.Errorf("after the rescue the job %s is %s, want %s", j.args, j.state, want)
			}
		}
		if ok, err := q.RescueChatJob(ctx, 7, 100, taken.Add(time.Second)); err != nil || ok {
			t.Errorf("a second rescue = %v, %v; want nothing left to hand back", ok, err)
		}
	})
}

// The chat's reaper hands back, once, every chat job a worker took before
// heldSince and left running whose claim no longer holds — its conversation
// was settled without it, after its worker died or gave up on an
// unreachable database — so it is finished and no longer counted pending:
// not one taken later, and not one whose claim still holds. (Regression:
// after a database outage waymark_chat_jobs_pending stayed at 30, the jobs
// running until River's rescue a day later.)
func TestRescueStaleChatJobsHandsBackOnlyJobsWhoseClaimHasGone(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := insertOnly(t, db)
		for _, j := range []map[string]any{{"op": "decide", "conversation": 7, "at": 100}, {"op": "turn", "conversation": 8, "at": 200}} {
			if err := q.InTx(ctx, func(tx *store.Tx) error { return q.InsertChatTx(ctx, tx, j) }); err != nil {
				t.Fatal(err)
			}
		}
		taken := time.Now().Add(-time.Minute)
		if _, err := db.Exec(ctx, "UPDATE river_job SET state = 'running', attempt = 1, attempted_at = ?", taken.UTC()); err != nil {
			t.Fatal(err)
		}
		holds := func(_ context.Context, conversation, at int64) (bool, error) {
			return conversation == 8 && at == 200, nil // conversation 7 was settled without its job
		}
		if n, err := q.RescueStaleChatJobs(ctx, taken.Add(-time.Second), 100, holds); err != nil || n != 0 {
			t.Errorf("jobs taken after heldSince: rescued %d, %v; want none", n, err)
		}
		if pending, err := q.ChatPending(ctx, db); err != nil || pending != 2 {
			t.Errorf("ChatPending before = %d, %v; want 2", pending, err)
		}
		if n, err := q.RescueStaleChatJobs(ctx, taken.Add(time.Second), 100, holds); err != nil || n != 1 {
			t.Errorf("jobs taken before heldSince: rescued %d, %v; want conversation 7's only", n, err)
		}
		states, err := store.Collect(ctx, db, store.Column[string], "SELECT state FROM river_job ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(states, []string{"available", "running"}) {
			t.Errorf("after the rescue the jobs are %v, want [available running]", states)
		}
		if n, err := q.RescueStaleChatJobs(ctx, taken.Add(time.Second), 100, holds); err != nil || n != 0 {
			t.Errorf("a second pass rescued %d, %v; want none", n, err)
		}
	})
}
