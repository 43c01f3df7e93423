package content

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
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
	// Landing is where a writer into the site's own CMS put the change:
	// live, or a draft workspace for review. Nil: live (the built-in and
	// the direct writers write live only).
	Landing *Landing `json:"landing,omitempty"`
}

// Lander is a RecordWriter that knows before a write where it will land
// (the TYPO3 bridge asks TYPO3 for the user's workspace).
type Lander interface {
	// Landing says where a write of user to fields of record uid of table
	// would land now, and, for a draft workspace, the values of those
	// fields as the user sees them there (Landing.Current).
	Landing(ctx context.Context, user int64, table string, uid int64, fields []string) (*Landing, error)
}

// Landing is where a change landed in the site's own CMS: Workspace 0 is
// live, another a draft workspace (TYPO3's EXT:workspaces) named Title,
// where the change waits to be reviewed and published.
type Landing struct {
	Workspace int64  `json:"workspace"`
	Title     string `json:"title,omitempty"`
	// Current holds, for a draft workspace, the values of the asked fields
	// as the user sees them there (her draft over live), by field: the
	// card shows them as the values now, and the write compares with them.
	// Nil: the values read from the source are current (live).
	Current map[string]string `json:"-"`
}

// RecordWriter is where an approved change is written: the built-in Writer
// (Waymark's own copy of the site, the default) or a writer into the site's
// own database (typo3.RecordWriter). WriteTx runs inside the Waymark
// transaction that records the write; a writer into another database
// commits there first and is kept at most once by WriteRequest.Key.
type RecordWriter interface {
	Write(ctx context.Context, req WriteRequest) (Written, error)
	WriteTx(ctx context.Context, tx *store.Tx, req WriteRequest) (Written, error)
}

var _ RecordWriter = (*Writer)(nil)

// ConflictError refuses an approved write whose field was changed in the
// site's own database after the card was shown: nothing was written, and
// Current is the value the field holds now.
type ConflictError struct {
	Source  string // where it was changed, e.g. "TYPO3"
	Table   string
	UID     int64
	Field   string
	Current string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s:%d %s was changed in %s since the card was shown; nothing was written", e.Table, e.UID, e.Field, e.Source)
}

// ErrUnreachable is wrapped by a write whose target database cannot be
// reached: nothing was written.
var ErrUnreachable = errors.New("the database the change is written to is unreachable; nothing was written")

// ErrRefused is wrapped by a write the site's own database refused for a
// reason other than a conflict (the record went missing or was deleted
// there after the write's check): nothing was written. It fails the step.
var ErrRefused = errors.New("the site's database refused the write; nothing was written")

// ErrStateUnknown is wrapped by a write whose commit in the target
// database failed: it may or may not have been applied; the step is failed
// and a retry with the same key writes it at most once.
var ErrStateUnknown = errors.New("the write may or may not have been applied")

// Writer is the one way records change: permission check, history, result.
type Writer struct {
	db    *store.DB
	src   Source
	auth  Authorizer
	clock clock.Clock
}

// NewWriter returns a writer that reads the records of src (nil: the
// built-in source) and checks with auth.
func NewWriter(db *store.DB, src Source, auth Authorizer, clk clock.Clock) *Writer {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Writer{db: db, src: OrBuiltin(src), auth: auth, clock: clk}
}

// Source is the source the writer reads the records from.
func (w *Writer) Source() Source { return w.src }

// ErrInvalid is returned for a write naming an unknown table or field, or no field.
var ErrInvalid = errors.New("invalid write")

// WriteRequest names the record and the new field values.
type WriteRequest struct {
	Table  string
	UID    int64
	Fields map[string]string
	User   int64  // acting backend user
	Run    string // run uuid for the history, if a run wrote it
	// Key identifies the approved call that writes (run and call id): the
	// same on every retry of the call, so a writer into another database
	// applies it at most once. Empty for writes outside a run.
	Key string
	// Shown holds the values the editor was shown on the card, by field; a
	// writer into the site's own database refuses with *ConflictError when
	// a field holds another value now. Nil: the record as read.
	Shown map[string]string
	// Locked is the record as the caller read it in the write's
	// transaction with Writer.ReadLockedTx: the built-in writer takes it
	// in place of reading the record again. Nil, or read in another
	// transaction or of another record: the writer locks and reads it.
	Locked *Locked
}

// Locked is a record read in a write's transaction after its row lock
// (Writer.ReadLockedTx), as the built-in writer reads it before writing.
type Locked struct {
	rec Record
	tx  *store.Tx
}

// Record returns the record read (its own copy of the fields).
func (l *Locked) Record() Record {
	r := l.rec
	r.Fields = maps.Clone(l.rec.Fields)
	return r
}

// ReadLockedTx reads record uid of table in tx as the writer reads it before
// a write (CheckTx): on the built-in source under its row lock — on
// PostgreSQL one SELECT … FOR UPDATE, so a concurrent write of it waits for
// tx and the row read is the committed one. ErrNotFound when none exists.
// A caller that checks the record before writing it hands the result on
// (WriteRequest.Locked), and the record is read once.
func (w *Writer) ReadLockedTx(ctx context.Context, tx *store.Tx, table string, uid int64) (*Locked, error) {
	rec, err := w.readLocked(ctx, tx, table, uid)
	if err != nil {
		return nil, err
	}
	return &Locked{rec: rec, tx: tx}, nil
}

// readLocked reads the record for a write in tx: on the built-in source
// after locking its row (SQLite's immediate transactions already serialise
// writers, so there it needs no lock), on another source as it reads it.
func (w *Writer) readLocked(ctx context.Context, tx *store.Tx, table string, uid int64) (Record, error) {
	if !IsBuiltin(w.src) || tx.Dialect() != store.Postgres {
		return w.src.Get(ctx, tx, table, uid)
	}
	rec, err := scanRecord(tx.QueryRow(ctx, "SELECT "+recordColumns+" FROM records WHERE tbl = ? AND uid = ? FOR UPDATE", table, uid))
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, fmt.Errorf("%s:%d: %w", table, uid, ErrNotFound)
	}
	if err != nil {
		return Record{}, fmt.Errorf("lock %s:%d: %w", table, uid, err)
	}
	return rec, nil
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
	if !IsBuiltin(w.src) {
		// The records are read from a CMS beside Waymark (TYPO3): this
		// writer changes Waymark's own copy, which such a source does not
		// read, so the change would be recorded but never shown. Refused.
		return Written{}, ErrExternalSource
	}
	rec, names, err := w.CheckTx(ctx, tx, req)
	if err != nil {
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

// CheckTx makes the checks of a write without writing: the table and
// fields against the schema (ErrInvalid), the record as the writer's source holds it
// now (ErrNotFound), and the acting user's rights on it (the Authorizer). It
// returns the record and the written field names, sorted. On the built-in
// source it locks the record row first (a concurrent write of it waits for
// this transaction). A writer into the site's own database (TYPO3) checks
// with it, against the record read live from there.
func (w *Writer) CheckTx(ctx context.Context, tx *store.Tx, req WriteRequest) (Record, []string, error) {
	if len(req.Fields) == 0 {
		return Record{}, nil, fmt.Errorf("%w: no fields", ErrInvalid)
	}
	schemas, err := LoadSchemas(ctx, tx)
	if err != nil {
		return Record{}, nil, err
	}
	t, ok := schemas.Table(req.Table)
	if !ok {
		return Record{}, nil, fmt.Errorf("%w: unknown table %q", ErrInvalid, req.Table)
	}
	names := make([]string, 0, len(req.Fields))
	for f := range req.Fields {
		if _, ok := t.Field(f); !ok {
			return Record{}, nil, fmt.Errorf("%w: unknown field %s.%s", ErrInvalid, req.Table, f)
		}
		names = append(names, f)
	}
	sort.Strings(names)
	// The row is locked as it is read, so a concurrent write of the same
	// record waits here and then reads the committed fields instead of
	// storing a stale copy over them (a lost update on PostgreSQL). A record
	// the caller read so in this transaction is not read again.
	var rec Record
	if l := req.Locked; l != nil && l.tx == tx && l.rec.Table == req.Table && l.rec.UID == req.UID {
		rec = l.Record()
	} else if rec, err = w.readLocked(ctx, tx, req.Table, req.UID); err != nil {
		return Record{}, nil, err
	}
	if err := w.auth.AuthorizeWrite(ctx, tx, req.User, rec, names); err != nil {
		return Record{}, nil, err
	}
	return rec, names, nil
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

// RecordAppliedTx records, inside the Waymark transaction tx that records
// the write, the changes a writer into the site's own CMS (TYPO3) applied to
// rec for req: one cms_changes row per field, with the value before (the one
// the card showed) and after (the one the CMS holds), who it ran for, the
// run, and the page and language rec was on. The export of applied changes
// reads them; the record itself is the CMS's, and Waymark keeps no copy of it
// or of its history. landing is where the change went (nil: live). retry
// says the CMS found the changes applied already under req.Key (a retry of
// the approved call): a change the run has recorded already is not again.
func (w *Writer) RecordAppliedTx(ctx context.Context, tx *store.Tx, req WriteRequest, rec Record, changes []Change, landing *Landing, retry bool) error {
	page := rec.PID
	if rec.Table == "pages" {
		page = rec.UID
		if rec.L10nParent > 0 {
			page = rec.L10nParent
		}
	}
	var ws int64
	if landing != nil {
		ws = landing.Workspace
	}
	now := store.Micros(w.clock.Now())
	for _, c := range changes {
		if retry && req.Run != "" {
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM cms_changes WHERE run_uuid = ? AND tbl = ? AND uid = ? AND field = ? AND old_value = ? AND new_value = ?`,
				req.Run, req.Table, req.UID, c.Field, c.Old, c.New).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				continue // recorded by the attempt that committed
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO cms_changes (tbl, uid, field, old_value, new_value, user_uid, run_uuid, page_uid, language, workspace, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, req.Table, req.UID, c.Field, c.Old, c.New, req.User, req.Run, page, rec.Language, ws, now); err != nil {
			return fmt.Errorf("record the change of %s:%d.%s: %w", req.Table, req.UID, c.Field, err)
		}
	}
	return nil
}
