package access

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// countingDirectory is a directory beside Waymark that counts its reads.
type countingDirectory struct {
	reads atomic.Int64
	fail  atomic.Bool
}

func (d *countingDirectory) LoadActor(_ context.Context, _ store.Querier, uid int64) (*Actor, error) {
	d.reads.Add(1)
	if d.fail.Load() {
		return nil, errors.New("the directory does not answer")
	}
	return NewActor(User{UID: uid, Username: "erika", Admin: true}, Rights{}), nil
}

func (d *countingDirectory) LoadUser(ctx context.Context, q store.Querier, uid int64) (User, error) {
	a, err := d.LoadActor(ctx, q, uid)
	if err != nil {
		return User{}, err
	}
	return a.User, nil
}

func (d *countingDirectory) LoadUserByName(context.Context, store.Querier, string) (User, error) {
	return User{}, ErrNoUser
}

// Under WithActorMemo a user of a directory beside Waymark is read once for
// the checks of one decision, not once per check; without the memo, after
// actorMemoAge, for the authorization of a write and after a failed read
// it is read again.
func TestAUserBesideWaymarkIsReadOncePerDecision(t *testing.T) {
	db := storetest.SQLite(t)
	dir := &countingDirectory{}
	load := func(ctx context.Context) {
		t.Helper()
		if _, err := LoadActor(ctx, dir, db, 7); err != nil {
			t.Fatal(err)
		}
	}
	reads := func(want int64, what string) {
		t.Helper()
		if got := dir.reads.Swap(0); got != want {
			t.Errorf("%s: %d reads of the user, want %d", what, got, want)
		}
	}

	for range 3 {
		load(context.Background())
	}
	reads(3, "three loads without a memo")

	ctx := WithActorMemo(context.Background())
	if WithActorMemo(ctx) != ctx {
		t.Error("a memo inside a memo is a second memo")
	}
	for range 3 {
		load(ctx)
	}
	if _, err := LoadActor(ctx, dir, db, 8); err != nil {
		t.Fatal(err)
	}
	reads(2, "three loads of one user and one of another under a memo")

	rec := content.Record{Table: "pages", UID: 1, PID: 1, Fields: map[string]string{}}
	_ = NewChecker(db, nil, dir).AuthorizeWrite(ctx, db, 7, rec, nil)
	reads(1, "the authorization of a write under a memo")

	old := actorMemoAge
	actorMemoAge = 20 * time.Millisecond
	t.Cleanup(func() { actorMemoAge = old })
	time.Sleep(30 * time.Millisecond)
	load(ctx)
	load(ctx)
	reads(1, "two loads after the memo's age")

	fresh := WithActorMemo(context.Background())
	dir.fail.Store(true)
	if _, err := LoadActor(fresh, dir, db, 9); err == nil {
		t.Fatal("a failed read answered an actor")
	}
	dir.fail.Store(false)
	load(fresh)
	reads(2, "a failed read and the next load")
}
