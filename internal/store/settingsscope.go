package store

import (
	"context"
	"sync"
)

// settingsScope keeps the settings generation for a short stretch of code
// (SettingsScope).
type settingsScope struct {
	db   *DB
	mu   sync.Mutex
	gen  int64 // 0: not read yet, or a write under the scope may have moved it
	done bool  // ended: nothing is kept any more
}

type settingsScopeKey struct{}

// SettingsScope returns a context under which Generation reads db's
// settings generation once and answers it again, so the GenCache lookups
// of a stretch of code (authenticating a request, building a conversation's
// view) cost one read instead of one each, and a function that ends it.
// A write through db under the scope (DB.Exec, InTx) drops the kept
// generation, before and after it, so the stretch sees its own settings
// changes. It is meant for stretches that do not wait: a settings change
// committed elsewhere meanwhile is seen by the next scope, not this one.
// Never hold one across a model call, a stream or a long poll. Under a scope
// already open, or with the fast paths off, it does nothing.
func (db *DB) SettingsScope(ctx context.Context) (context.Context, func()) {
	if !db.fast {
		return ctx, func() {}
	}
	if s, ok := ctx.Value(settingsScopeKey{}).(*settingsScope); ok && s != nil && s.db == db {
		return ctx, func() {}
	}
	s := &settingsScope{db: db}
	return context.WithValue(ctx, settingsScopeKey{}, s), s.end
}

// WithoutSettingsScope returns ctx without its settings scope, if it has
// one: what runs under it reads the generation again (for the rest of a
// stretch that waits — a model call — after its first reads shared one).
func WithoutSettingsScope(ctx context.Context) context.Context {
	if s, ok := ctx.Value(settingsScopeKey{}).(*settingsScope); !ok || s == nil {
		return ctx
	}
	return context.WithValue(ctx, settingsScopeKey{}, (*settingsScope)(nil))
}

func settingsScopeOf(ctx context.Context, db *DB) *settingsScope {
	s, ok := ctx.Value(settingsScopeKey{}).(*settingsScope)
	if !ok || s == nil || s.db != db {
		return nil
	}
	return s
}

// kept returns the kept generation, 0 when there is none.
func (s *settingsScope) kept() int64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return 0
	}
	return s.gen
}

// keep keeps gen, read under the scope, unless the scope ended.
func (s *settingsScope) keep(gen int64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if !s.done {
		s.gen = gen
	}
	s.mu.Unlock()
}

// drop forgets the kept generation: a write under the scope may move it.
func (s *settingsScope) drop() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.gen = 0
	s.mu.Unlock()
}

// end ends the scope: a read under its context reads the generation each time.
func (s *settingsScope) end() {
	s.mu.Lock()
	s.gen, s.done = 0, true
	s.mu.Unlock()
}
