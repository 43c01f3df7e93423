package access

import (
	"context"
	"sync"
	"time"
)

// actorMemoAge bounds how long a memoised actor is answered again: a
// stretch that outlives it (a stream, a long poll, a model call) reads the
// user anew, so a rights change counts there within this time.
var actorMemoAge = 2 * time.Second

// actorMemo keeps the actors of external directories a stretch of code
// loaded (WithActorMemo).
type actorMemo struct {
	mu sync.Mutex
	m  map[memoKey]memoEntry
}

type memoKey struct {
	dir Directory
	uid int64
}

type memoEntry struct {
	a  *Actor
	at time.Time
}

type actorMemoKey struct{}

// WithActorMemo returns a context under which LoadActor reads a user of a
// directory beside Waymark (TYPO3) once and answers the same actor again,
// for at most actorMemoAge: the checks of one decision — an API request, a
// queue job — cost one read of the user, its groups and its mounts instead
// of one each (an answered card read the same TYPO3 user fourteen times).
// A rights change made in TYPO3 counts at the next decision, as before.
// The built-in directory is not memoised: a change Waymark makes to its own
// users within the stretch must show in the stretch. An Actor is never
// changed after it is built, so sharing one is safe. AuthorizeWrite never
// answers from the memo: a write is authorized on the rights as they are
// when it is made. Under a memo already in place it returns ctx.
func WithActorMemo(ctx context.Context) context.Context {
	if m, _ := ctx.Value(actorMemoKey{}).(*actorMemo); m != nil {
		return ctx
	}
	return context.WithValue(ctx, actorMemoKey{}, &actorMemo{m: map[memoKey]memoEntry{}})
}

// withoutActorMemo returns ctx without its memo: the user is read now (the
// authorization of a write).
func withoutActorMemo(ctx context.Context) context.Context {
	if _, ok := ctx.Value(actorMemoKey{}).(*actorMemo); !ok {
		return ctx
	}
	return context.WithValue(ctx, actorMemoKey{}, (*actorMemo)(nil))
}

// memoOf returns ctx's memo of d's actors: nil without a memo or for the
// built-in directory (then get finds nothing and put keeps nothing).
func memoOf(ctx context.Context, d Directory) *dirMemo {
	m, _ := ctx.Value(actorMemoKey{}).(*actorMemo)
	if _, builtin := d.(BuiltinDirectory); m == nil || builtin {
		return nil
	}
	return &dirMemo{m, d}
}

// dirMemo is one directory's part of an actorMemo.
type dirMemo struct {
	m *actorMemo
	d Directory
}

// get returns the actor of uid read less than actorMemoAge ago, or nil.
func (dm *dirMemo) get(uid int64) *Actor {
	if dm == nil {
		return nil
	}
	dm.m.mu.Lock()
	defer dm.m.mu.Unlock()
	if e, ok := dm.m.m[memoKey{dm.d, uid}]; ok && time.Since(e.at) < actorMemoAge {
		return e.a
	}
	return nil
}

// put keeps a, the actor of uid read at at.
func (dm *dirMemo) put(uid int64, a *Actor, at time.Time) {
	if dm == nil {
		return
	}
	dm.m.mu.Lock()
	dm.m.m[memoKey{dm.d, uid}] = memoEntry{a, at}
	dm.m.mu.Unlock()
}
