package openpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"waymark/internal/access"
	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/store"
)

// Target names the record and fields of a card's pending write (the card's
// pendingTarget); an empty Fields list is the record as a whole. It has the
// fields of tool.Target, so a card's target converts to it.
type Target struct {
	Table  string   `json:"table"`
	UID    int64    `json:"uid"`
	Fields []string `json:"fields"`
}

// Step is what CloseApplied needs of the write an approved card made: whether
// it counts as applied (tool.WriteStep: complete and without a hook failure
// after the write, DESIGN.md §6 invariant 9).
type Step interface{ Closes() bool }

// Key is what a skipped card showed: the process skill, the subject page of
// the conversation and the target of its one pending call.
type Key struct {
	Skill  int64
	Page   int64
	Target Target
}

// ErrNotFound answers a page the reader may not show exactly like a missing
// one (ForPage, OnPage).
var ErrNotFound = errors.New("not found")

// ErrInvalidKey is returned by RecordSkip for a key without skill, page,
// table or uid; nothing is stored then.
var ErrInvalidKey = errors.New("invalid open point key")

// check refuses a key that cannot name an open point.
func (k Key) check() error {
	switch {
	case k.Skill <= 0:
		return fmt.Errorf("%w: no skill", ErrInvalidKey)
	case k.Page <= 0:
		return fmt.Errorf("%w: no page", ErrInvalidKey)
	case k.Target.Table == "":
		return fmt.Errorf("%w: no target table", ErrInvalidKey)
	case k.Target.UID <= 0:
		return fmt.Errorf("%w: no target uid", ErrInvalidKey)
	}
	return nil
}

// Point is one stored open point: identities only.
type Point struct {
	Skill     int64
	Page      int64
	Table     string
	UID       int64
	Field     string // "" for the record as a whole
	Language  int64  // the target record's language when the point was recorded
	CreatedAt time.Time

	id int64 // row id, the tie-break of newest first
}

// Store records, closes and lists open points (ADR-022): the tracker and
// the repository of the reference in one.
type Store struct {
	db  *store.DB
	src content.Source
	dir access.Directory
	clk clock.Clock
}

// New returns the open points kept in db, on the records of src and for
// the users of dir (nil: the built-in source and directory); clk dates new
// points (the real clock when nil).
func New(db *store.DB, src content.Source, dir access.Directory, clk clock.Clock) *Store {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Store{db: db, src: content.OrBuiltin(src), dir: access.OrBuiltin(dir), clk: clk}
}

// fieldKeys returns the sorted, unique fields of t, or [""] when it names none.
func fieldKeys(t Target) []string {
	out := slices.Clone(t.Fields)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

// RecordSkip records the open points of a skipped card (P.R2, P.R3): one row
// per field of target, or one row with the field "" when it names none. The
// target record's language is read now (0 when the record is missing).
// Recording again is harmless: a point already open keeps its date.
//
// The decision rules are the caller's (P.R4): call it only once the runtime
// accepted a denial with the reason skip, for a card with exactly one call
// that names a target, in a conversation with a skill and a page — never for
// variant, a denial without reason, a create, a multi-call card, a refused
// or handed-back decision, a failed continuation, a withdrawn proposal or a
// cancelled run. A key without skill, page, table or uid is refused with
// ErrInvalidKey and stores nothing.
func (o *Store) RecordSkip(ctx context.Context, skill, page int64, target Target) error {
	k := Key{Skill: skill, Page: page, Target: target}
	if err := k.check(); err != nil {
		return err
	}
	return o.db.InTx(ctx, func(tx *store.Tx) error { return o.record(ctx, tx, k) })
}

// RecordSkipTx is RecordSkip inside tx.
func (o *Store) RecordSkipTx(ctx context.Context, tx *store.Tx, skill, page int64, target Target) error {
	k := Key{Skill: skill, Page: page, Target: target}
	if err := k.check(); err != nil {
		return err
	}
	return o.record(ctx, tx, k)
}

func (o *Store) record(ctx context.Context, q store.Querier, k Key) error {
	lang, _, err := content.Language(ctx, o.src, q, k.Target.Table, k.Target.UID)
	if err != nil {
		return fmt.Errorf("open point on %s:%d: %w", k.Target.Table, k.Target.UID, err)
	}
	now := store.Micros(o.clk.Now())
	for _, f := range fieldKeys(k.Target) {
		if _, err := q.Exec(ctx, `INSERT INTO open_points (skill_uid, page_uid, tbl, uid, field, language, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (skill_uid, page_uid, tbl, uid, field) DO NOTHING`,
			k.Skill, k.Page, k.Target.Table, k.Target.UID, f, lang, now); err != nil {
			return fmt.Errorf("record open point %s:%d %q: %w", k.Target.Table, k.Target.UID, f, err)
		}
	}
	return nil
}

// CloseApplied closes the open points an approved card's write settled
// (P.C1): when firstStepOK (the first tool step is the approved call and it
// succeeded) and step states complete without a hook failure after the
// write, every open point on target's record and fields is deleted,
// whichever skill or page recorded it. Otherwise — a partial write, a hook
// failure, a failed call, a write that states no completeness — it closes
// nothing (P.C2). It returns the number of points closed.
func (o *Store) CloseApplied(ctx context.Context, target Target, step Step, firstStepOK bool) (int, error) {
	return o.closeApplied(ctx, o.db, target, step, firstStepOK)
}

// CloseAppliedTx is CloseApplied inside tx, to commit with the decision.
func (o *Store) CloseAppliedTx(ctx context.Context, tx *store.Tx, target Target, step Step, firstStepOK bool) (int, error) {
	return o.closeApplied(ctx, tx, target, step, firstStepOK)
}

func (o *Store) closeApplied(ctx context.Context, q store.Querier, target Target, step Step, firstStepOK bool) (int, error) {
	if !firstStepOK || step == nil || !step.Closes() {
		return 0, nil
	}
	return o.close(ctx, q, target)
}

// CloseKept closes the open points of a card answered with *Behalten* (P.K1):
// every open point on target's record and fields, whoever recorded it; none
// is recorded. A card without target (empty table) closes nothing (P.K2).
func (o *Store) CloseKept(ctx context.Context, target Target) (int, error) {
	return o.close(ctx, o.db, target)
}

// CloseKeptTx is CloseKept inside tx.
func (o *Store) CloseKeptTx(ctx context.Context, tx *store.Tx, target Target) (int, error) {
	return o.close(ctx, tx, target)
}

func (o *Store) close(ctx context.Context, q store.Querier, t Target) (int, error) {
	if t.Table == "" || t.UID <= 0 {
		return 0, nil
	}
	closed := 0
	for _, f := range fieldKeys(t) {
		res, err := q.Exec(ctx, "DELETE FROM open_points WHERE tbl = ? AND uid = ? AND field = ?", t.Table, t.UID, f)
		if err != nil {
			return closed, fmt.Errorf("close open points on %s:%d %q: %w", t.Table, t.UID, f, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return closed, fmt.Errorf("close open points on %s:%d: %w", t.Table, t.UID, err)
		}
		closed += int(n)
	}
	return closed, nil
}
