package store

import (
	"context"
	"fmt"
	"sync"
)

// Generation reads the settings generation: a counter that every committed
// change of users, groups, schema extensions, tool settings and
// configurations moves (triggers of migrations 00006 and 00009). Whatever is
// derived from those tables alone may be kept in memory for one generation.
//
// Under a read scope (ReadScope) the generation is read once: the scope's
// snapshot cannot see it move. In a transaction it is read again only after
// a statement that may have written.
func Generation(ctx context.Context, q Querier) (int64, error) {
	if tx, ok := q.(*Tx); ok && tx.gen != 0 {
		return tx.gen, nil
	}
	db, _ := q.(*DB)
	var scope *readScope
	if db != nil {
		s, gen, ok := scopedGeneration(ctx, db)
		if ok {
			return gen, nil
		}
		scope = s
	}
	var gen int64
	if err := q.QueryRow(ctx, "SELECT gen FROM access_generation WHERE id = 1").Scan(&gen); err != nil {
		return 0, fmt.Errorf("read settings generation: %w", err)
	}
	if scope != nil && db.scopeTx(ctx) != nil {
		scope.keepGeneration(gen)
	}
	if tx, ok := q.(*Tx); ok {
		tx.gen = gen
	}
	return gen, nil
}

// GenCache keeps values derived from the settings tables, per database and
// for one settings generation: Get reads the generation (one primary-key
// read) and answers from memory while it has not moved. Values must not be
// modified by callers once loaded.
//
// A value loaded inside a transaction is used but not kept: the transaction
// may have changed the settings itself and may still roll back.
type GenCache[K comparable, V any] struct {
	_ byte // distinct caches have distinct addresses: the address keys DB.caches
}

type genSlot[K comparable, V any] struct {
	mu   sync.Mutex
	gen  int64
	vals map[K]V
}

// maxGenEntries bounds one database's entries of one cache; a full slot starts over.
const maxGenEntries = 4096

// Get returns key's value at the current generation, loading it with load
// (on the same Querier) when it is not kept.
func (c *GenCache[K, V]) Get(ctx context.Context, q Querier, key K, load func(context.Context, Querier) (V, error)) (V, error) {
	var zero V
	gen, err := Generation(ctx, q)
	if err != nil {
		return zero, err
	}
	pool := q.Pool()
	if pool == nil {
		return load(ctx, q)
	}
	v, _ := pool.caches.LoadOrStore(c, &genSlot[K, V]{})
	s := v.(*genSlot[K, V])
	s.mu.Lock()
	if s.gen == gen {
		if v, ok := s.vals[key]; ok {
			s.mu.Unlock()
			return v, nil
		}
	}
	s.mu.Unlock()
	val, err := load(ctx, q)
	if err != nil {
		return zero, err
	}
	if _, inTx := q.(*Tx); inTx {
		return val, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.gen > gen:
		return val, nil // a newer generation is kept already; this read was older
	case s.gen < gen || len(s.vals) >= maxGenEntries:
		s.gen, s.vals = gen, map[K]V{}
	}
	s.vals[key] = val
	return val, nil
}
