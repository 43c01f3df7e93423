package content

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"waymark/internal/clock"
	"waymark/internal/store"
)

// Authorizer decides whether a user may write fields of a record. It is
// implemented by access.Checker, which reads the user as stored now.
type Authorizer interface {
	AuthorizeWrite(ctx context.Context, q store.Querier, user int64, rec Record, fields []string) error
}

// Change is one field a write changed.
type Change struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// Written is what a write did: the record and the fields it changed. A field
// whose new value equals the old one is not a change and is not recorded.
type Written struct {
	Table   string   `json:"table"`
	UID     int64    `json:"uid"`
	Changes []Change `json:"changes"`
}

// Writer is the one way records change: permission check, history, result.
type Writer struct {
	db    *store.DB
	auth  Authorizer
	clock clock.Clock
}

// NewWriter returns a writer that checks with auth.
func NewWriter(db *store.DB, auth Authorizer, clk clock.Clock) *Writer {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Writer{db: db, auth: auth, clock: clk}
}

// ErrInvalid is returned for a write naming an unknown table or field, or no field.
var ErrInvalid = errors.New("invalid write")

// WriteRequest names the record and the new field values.
type WriteRequest struct {
	Table  string
	UID    int64
	Fields map[string]string
	User   int64  // acting backend user
	Run    string // run uuid for the history, if a run wrote it
}

// Write applies req in one transaction.
func (w *Writer) Write(ctx context.Context, req WriteRequest) (Written, error) {
	var out Written
	err := w.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = w.WriteTx(ctx, tx, req)
		return err
	})
	return out, err
}

// WriteTx applies req inside tx: it validates the fields against the schema,
// locks the record row (a concurrent write of it waits for this one),
// asks the Authorizer, updates the record and records one history row per changed field.
func (w *Writer) WriteTx(ctx context.Context, tx *store.Tx, req WriteRequest) (Written, error) {
	if len(req.Fields) == 0 {
		return Written{}, fmt.Errorf("%w: no fields", ErrInvalid)
	}
	schemas, err := LoadSchemas(ctx, tx)
	if err != nil {
		return Written{}, err
	}
	t, ok := schemas.Table(req.Table)
	if !ok {
		return Written{}, fmt.Errorf("%w: unknown table %q", ErrInvalid, req.Table)
	}
	names := make([]string, 0, len(req.Fields))
	for f := range req.Fields {
		if _, ok := t.Field(f); !ok {
			return Written{}, fmt.Errorf("%w: unknown field %s.%s", ErrInvalid, req.Table, f)
		}
		names = append(names, f)
	}
	sort.Strings(names)
	// Lock the row before reading it, so a concurrent write of the same record
	// waits here and then reads the committed fields instead of storing a
	// stale copy over them (a lost update on PostgreSQL; SQLite's immediate
	// transactions already serialise writers, so it needs no lock).
	if tx.Dialect() == store.Postgres {
		if _, err := tx.Exec(ctx, "SELECT 1 FROM records WHERE tbl = ? AND uid = ? FOR UPDATE", req.Table, req.UID); err != nil {
			return Written{}, fmt.Errorf("lock %s:%d: %w", req.Table, req.UID, err)
		}
	}
	rec, err := Get(ctx, tx, req.Table, req.UID)
	if err != nil {
		return Written{}, err
	}
	if err := w.auth.AuthorizeWrite(ctx, tx, req.User, rec, names); err != nil {
		return Written{}, err
	}
	now := store.Micros(w.clock.Now())
	out := Written{Table: req.Table, UID: req.UID, Changes: []Change{}}
	for _, f := range names {
		old, nv := rec.Fields[f], req.Fields[f]
		if old == nv {
			continue
		}
		rec.Fields[f] = nv
		out.Changes = append(out.Changes, Change{Field: f, Old: old, New: nv})
		if _, err := tx.Exec(ctx, `INSERT INTO record_history (tbl, uid, field, old_value, new_value, user_uid, run_uuid, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, req.Table, req.UID, f, old, nv, req.User, req.Run, now); err != nil {
			return Written{}, fmt.Errorf("history of %s:%d: %w", req.Table, req.UID, err)
		}
	}
	if len(out.Changes) == 0 {
		return out, nil
	}
	if _, err := tx.Exec(ctx, "UPDATE records SET fields = ?, updated_at = ? WHERE tbl = ? AND uid = ?",
		encodeFields(rec.Fields), now, req.Table, req.UID); err != nil {
		return Written{}, fmt.Errorf("update %s:%d: %w", req.Table, req.UID, err)
	}
	return out, nil
}

// HistoryEntry is one recorded change.
type HistoryEntry struct {
	Field, Old, New string
	User            int64
	Run             string
	At              int64 // unix micros
}

// History lists the changes of a record, oldest first.
func History(ctx context.Context, q store.Querier, table string, uid int64) ([]HistoryEntry, error) {
	return store.Collect(ctx, q, func(sc store.Scanner) (HistoryEntry, error) {
		var h HistoryEntry
		err := sc.Scan(&h.Field, &h.Old, &h.New, &h.User, &h.Run, &h.At)
		return h, err
	}, `SELECT field, old_value, new_value, user_uid, run_uuid, created_at
		FROM record_history WHERE tbl = ? AND uid = ? ORDER BY id`, table, uid)
}
