package typo3

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/store"
)

// RecordWriter writes approved changes back into TYPO3: a content.RecordWriter
// for the tools' approval path, in place of the built-in content.Writer,
// while the records come from TYPO3 (Local's source is TYPO3's, as
// `serve --typo3` runs; app.Config.TYPO3 derives it).
//
// A write runs inside the Waymark transaction that records it (run events,
// the release of the write fence). Local, the built-in writer, only checks:
// the table, the fields and the acting user's rights
// (content.Writer.CheckTx) against the TYPO3 row read live. Nothing of the
// record is kept in Waymark: the value before the change is the one the card
// showed (WriteRequest.Shown), else the one TYPO3 holds at the check, and
// TYPO3's sys_history is the record's history.
//
// Then Writer.ApplyAll writes the TYPO3 row(s), sys_history, sys_log and the
// page cache flush in one TYPO3 transaction and commits it; the Waymark
// transaction commits after. The idempotency key of each field is derived
// from WriteRequest.Key (the run and the approved call) and stored only in
// sys_history.correlation_id, in the same TYPO3 transaction: a retry after a
// crash between the two commits finds it and writes nothing to TYPO3 again
// (at most once), and Waymark's record of the run is completed by the retry.
type RecordWriter struct {
	TYPO3 *Writer
	Local *content.Writer
	DB    *store.DB // Waymark's database (Write's transaction)
}

var _ content.RecordWriter = (*RecordWriter)(nil)

// ErrNotBesideTYPO3 refuses a write while the records are read from
// Waymark's own tables: the check would be made on records TYPO3 does not
// hold, and the change would never show in Waymark.
var ErrNotBesideTYPO3 = errors.New("typo3 writer: the records are read from Waymark's own tables, not from TYPO3 (attach the TYPO3 source); nothing was written")

// Write applies req in a Waymark transaction of its own.
func (r *RecordWriter) Write(ctx context.Context, req content.WriteRequest) (content.Written, error) {
	var out content.Written
	err := r.DB.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = r.WriteTx(ctx, tx, req)
		return err
	})
	return out, err
}

// WriteTx checks req inside tx against the TYPO3 row read live and writes it
// into TYPO3, which commits first. A field that holds in TYPO3 another value
// than the card showed (req.Shown, else the value read at the check) is not
// overwritten: the answer is a *content.ConflictError with the current
// value, nothing written. An unreachable TYPO3 database wraps
// content.ErrUnreachable, a failed TYPO3 commit content.ErrStateUnknown.
func (r *RecordWriter) WriteTx(ctx context.Context, tx *store.Tx, req content.WriteRequest) (content.Written, error) {
	if content.IsBuiltin(r.Local.Source()) {
		return content.Written{}, ErrNotBesideTYPO3
	}
	written, rec, err := r.check(ctx, tx, req)
	if err != nil {
		return written, err
	}
	if len(written.Changes) == 0 {
		return r.retried(ctx, tx, req, rec, written)
	}
	key := req.Key
	if key == "" {
		// A write outside a run has no retry to recognise: any fresh key
		// keeps it to one application.
		var b [16]byte
		_, _ = rand.Read(b[:])
		key = "once/" + hex.EncodeToString(b[:])
	}
	changes := make([]Change, len(written.Changes))
	for i, c := range written.Changes {
		old := c.Old
		if shown, ok := req.Shown[c.Field]; ok {
			old = shown
		}
		changes[i] = Change{Table: req.Table, UID: req.UID, Field: c.Field, Old: old, New: c.New, UserID: req.User,
			Key: fieldKey(key, c.Field)}
	}
	if _, err := r.TYPO3.ApplyAll(ctx, changes); err != nil {
		return content.Written{}, r.explain(ctx, req, err)
	}
	// TYPO3 has committed: the export's account of the change commits with
	// tx, as the run's record of the write does.
	if err := r.Local.RecordAppliedTx(ctx, tx, req, rec, written.Changes, nil, false); err != nil {
		return content.Written{}, err
	}
	return written, nil
}

// retried handles a write that finds TYPO3 holding the new values already
// where the card showed others: the retry of an approved call whose TYPO3
// commit stood and whose Waymark transaction did not (the process died
// between the two). TYPO3's history holds the call's key: the changes are
// answered as written and the export's account of them is recorded now. A
// field someone else set to the same value in TYPO3 (no key) is no change.
func (r *RecordWriter) retried(ctx context.Context, tx *store.Tx, req content.WriteRequest, rec content.Record, none content.Written) (content.Written, error) {
	if req.Key == "" {
		return none, nil
	}
	var changes []Change
	var written []content.Change
	for _, f := range slices.Sorted(maps.Keys(req.Fields)) {
		shown, ok := req.Shown[f]
		if nv := req.Fields[f]; ok && shown != nv && rec.Fields[f] == nv {
			changes = append(changes, Change{Table: req.Table, UID: req.UID, Field: f, Old: shown, New: nv, UserID: req.User, Key: fieldKey(req.Key, f)})
			written = append(written, content.Change{Field: f, Old: shown, New: nv})
		}
	}
	if len(changes) == 0 {
		return none, nil
	}
	_, err := r.TYPO3.ApplyAll(ctx, changes) // each key found: nothing is written again
	var conflict *ConflictError
	if errors.As(err, &conflict) {
		return none, nil
	}
	if err != nil {
		return content.Written{}, r.explain(ctx, req, err)
	}
	if err := r.Local.RecordAppliedTx(ctx, tx, req, rec, written, nil, true); err != nil {
		return content.Written{}, err
	}
	return content.Written{Table: req.Table, UID: req.UID, Changes: written}, nil
}

// check makes the write's checks against the record read live from TYPO3
// and returns the changes it would make and the record read: a field whose
// new value is the one TYPO3 holds (and the card showed) is no change.
func (r *RecordWriter) check(ctx context.Context, tx *store.Tx, req content.WriteRequest) (content.Written, content.Record, error) {
	rec, names, err := r.Local.CheckTx(ctx, tx, req)
	if err == nil {
		err = r.liveAccess(ctx, req.User)
	}
	if err != nil {
		if r.gone(ctx) {
			// The record or the rights could not be read: TYPO3 does not
			// answer. Nothing was written.
			return content.Written{}, rec, fmt.Errorf("%w: TYPO3 database: %w", content.ErrUnreachable, err)
		}
		return content.Written{}, rec, err
	}
	out := content.Written{Table: req.Table, UID: req.UID, Changes: []content.Change{}}
	for _, f := range names {
		// A field changed in TYPO3 since the card was shown is refused by
		// ApplyAll (WriteTx passes the shown value as the old one).
		if old, nv := rec.Fields[f], req.Fields[f]; old != nv {
			out.Changes = append(out.Changes, content.Change{Field: f, Old: old, New: nv})
		}
	}
	return out, rec, nil
}

// fieldKey is the correlation key of one field of an approved call: the
// call's key and the field (sys_history rows are per record and key), hashed
// when it would not fit the 200 characters Apply takes.
func fieldKey(key, field string) string {
	k := key + "#" + field
	if len(k) > 200 {
		sum := sha256.Sum256([]byte(k))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	return k
}

// explain turns a TYPO3 write error into the content package's terms.
func (r *RecordWriter) explain(ctx context.Context, req content.WriteRequest, err error) error {
	var conflict *ConflictError
	switch {
	case errors.As(err, &conflict):
		// The card shown again reads the current value from TYPO3.
		return &content.ConflictError{Source: "TYPO3", Table: conflict.Table, UID: conflict.UID, Field: conflict.Field,
			Current: conflict.Current}
	case errors.Is(err, ErrStateUnknown):
		return fmt.Errorf("%w: TYPO3: %w", content.ErrStateUnknown, err)
	case errors.Is(err, ErrUnknownRecord):
		// Not content.ErrNotFound: the tool would answer it as a result
		// and commit the run's record of a write that did not happen.
		return fmt.Errorf("%w: %w", content.ErrRefused, err)
	}
	if r.gone(ctx) {
		return fmt.Errorf("%w: TYPO3 database: %w", content.ErrUnreachable, err)
	}
	return fmt.Errorf("TYPO3 write of %s:%d: %w", req.Table, req.UID, err)
}

// gone reports whether the TYPO3 database does not answer a ping.
func (r *RecordWriter) gone(ctx context.Context) bool {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return r.TYPO3.db.PingContext(pctx) != nil
}

// NoLiveAccess is the reason the direct writer refuses a user TYPO3 gives
// no access to the live workspace.
const NoLiveAccess = "TYPO3 gives this user no access to the live workspace; " +
	"changes need the TYPO3 bridge to become workspace versions"

// liveAccess refuses (an *access.DeniedError) a write for user uid when
// TYPO3 would not let her change the live workspace (EXT:workspaces
// installed, workspace_perms of her and her groups without bit 1): this
// writer writes the live rows only, and DataHandler would have made a
// workspace version of her change instead.
func (r *RecordWriter) liveAccess(ctx context.Context, uid int64) error {
	dir, err := NewDirectory(r.TYPO3.db, r.TYPO3.d, nil)
	if err != nil {
		return err
	}
	u, err := dir.UserByUID(ctx, uid)
	if err != nil {
		return fmt.Errorf("read backend user %d for the workspace check: %w", uid, err)
	}
	ok, err := dir.LiveAccess(ctx, u)
	if err != nil {
		return err
	}
	if !ok {
		return &access.DeniedError{Reason: NoLiveAccess}
	}
	return nil
}
