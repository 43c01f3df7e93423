package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Generation reads the settings generation: a counter that every committed
// change of users, groups, schema extensions, tool settings and
// configurations moves (triggers of migrations 00006 and 00009). Whatever is
// derived from those tables alone may be kept in memory for one generation.
//
// Under a read scope (ReadScope) the generation is read once: the scope's
// snapshot cannot see it move; under a settings scope (SettingsScope), once
// until a write under it. In a transaction it is read again only after
// a statement that may have written.
func Generation(ctx context.Context, q Querier) (int64, error) {
	fast := q.Pool() == nil || q.Pool().fast
	if tx, ok := q.(*Tx); ok && tx.gen != 0 && fast {
		return tx.gen, nil
	}
	db, _ := q.(*DB)
	var (
		scope    *readScope
		settings *settingsScope
	)
	if db != nil {
		s, gen, ok := scopedGeneration(ctx, db)
		if ok {
			return gen, nil
		}
		scope = s
		settings = settingsScopeOf(ctx, db)
		if gen := settings.kept(); gen != 0 {
			return gen, nil
		}
	}
	var gen int64
	if err := q.QueryRow(ctx, "SELECT gen FROM access_generation WHERE id = 1").Scan(&gen); err != nil {
		return 0, fmt.Errorf("read settings generation: %w", err)
	}
	if scope != nil && db.scopeTx(ctx) != nil {
		scope.keepGeneration(gen)
	}
	settings.keep(gen)
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
//
// A cache is declared with NewGenCache and the tables its values derive
// from; every change of those must move the generation, which
// MissingGenerationTriggers checks against the database's triggers.
type GenCache[K comparable, V any] struct {
	tables []string // distinct caches have distinct addresses: the address keys DB.caches
}

// NewGenCache returns a cache of values derived from tables, and registers
// the tables (GenerationTables).
func NewGenCache[K comparable, V any](tables ...string) *GenCache[K, V] {
	GenerationTables(tables...)
	return &GenCache[K, V]{tables: tables}
}

// genTables is the registry of GenerationTables: table name → true.
var genTables sync.Map

// GenerationTables registers tables from which a process keeps something in
// memory for one settings generation — a GenCache does it for its own, code
// that reads Generation itself (the API token cache) calls it. It returns
// nothing useful; call it in a package-level declaration
// (var _ = store.GenerationTables("api_tokens")).
func GenerationTables(tables ...string) bool {
	for _, t := range tables {
		genTables.Store(t, true)
	}
	return true
}

// RegisteredGenerationTables returns the tables registered so far, sorted.
func RegisteredGenerationTables() []string {
	var out []string
	genTables.Range(func(k, _ any) bool {
		out = append(out, k.(string))
		return true
	})
	slices.Sort(out)
	return out
}

// ErrGenCacheWithoutTables is returned by Get of a cache not made by NewGenCache.
var ErrGenCacheWithoutTables = errors.New("store: GenCache without its tables (declare it with NewGenCache)")

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
	if len(c.tables) == 0 {
		return zero, ErrGenCacheWithoutTables
	}
	pool := q.Pool()
	if pool == nil || !pool.fast {
		return load(ctx, q)
	}
	gen, err := Generation(ctx, q)
	if err != nil {
		return zero, err
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

// MissingGenerationTriggers returns "table INSERT|UPDATE|DELETE" for every
// registered table (RegisteredGenerationTables) and change that no trigger
// of the database turns into a move of the settings generation; empty when
// every kept value is safe. It reads the triggers of the schema: SQLite's
// sqlite_master, PostgreSQL's information_schema.triggers and the functions
// they run.
func MissingGenerationTriggers(ctx context.Context, db *DB) ([]string, error) {
	have := map[string]bool{} // "table EVENT"
	if db.dialect == SQLite {
		rows, err := db.Query(ctx, "SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'")
		if err != nil {
			return nil, fmt.Errorf("read triggers: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var table, def string
			if err := rows.Scan(&table, &def); err != nil {
				return nil, fmt.Errorf("read triggers: %w", err)
			}
			up := strings.ToUpper(def)
			if !strings.Contains(up, "UPDATE ACCESS_GENERATION SET GEN = GEN + 1") {
				continue
			}
			head, _, _ := strings.Cut(up, " BEGIN")
			for _, ev := range []string{"INSERT", "UPDATE", "DELETE"} {
				if strings.Contains(head, " "+ev+" ") {
					have[table+" "+ev] = true
				}
			}
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read triggers: %w", err)
		}
	} else {
		rows, err := db.Query(ctx, `SELECT t.event_object_table, t.event_manipulation, p.prosrc
			FROM information_schema.triggers t
			JOIN pg_proc p ON t.action_statement = 'EXECUTE FUNCTION ' || p.proname || '()'
			WHERE t.event_object_schema = current_schema()`)
		if err != nil {
			return nil, fmt.Errorf("read triggers: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var table, ev, src string
			if err := rows.Scan(&table, &ev, &src); err != nil {
				return nil, fmt.Errorf("read triggers: %w", err)
			}
			if strings.Contains(strings.ToUpper(src), "UPDATE ACCESS_GENERATION SET GEN = GEN + 1") {
				have[table+" "+strings.ToUpper(ev)] = true
			}
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read triggers: %w", err)
		}
	}
	var missing []string
	for _, t := range RegisteredGenerationTables() {
		for _, ev := range []string{"INSERT", "UPDATE", "DELETE"} {
			if !have[t+" "+ev] {
				missing = append(missing, t+" "+ev)
			}
		}
	}
	return missing, nil
}
