package bridge

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/typo3"
)

// FileReferences finds the row that holds a value kept on a record's first
// file reference (the alternative text of a content element's image).
type FileReferences interface {
	FirstFileReference(ctx context.Context, table string, uid int64, fieldname string) (int64, error)
}

// RecordWriter writes approved changes through the TYPO3 extension: TYPO3's
// DataHandler applies them as the editor, in her current workspace, with
// TYPO3's rights, TCA evaluation, hooks, history, log, reference index and
// caches. Waymark checks the table and fields against its schema and reads
// the record live (the value the card showed is compared by the extension);
// the editor's rights are DataHandler's to decide at the write — they were
// Waymark's to check before the card was offered (tool.Preview).
//
// The extension keeps each write's key (the approved call's, one per
// record): a retry after a lost answer or a crash between TYPO3's commit
// and Waymark's applies nothing twice.
type RecordWriter struct {
	client *Client
	local  *content.Writer
	db     *store.DB
	refs   FileReferences
}

// NewRecordWriter returns the writer of approved changes through client,
// checking them against the records read live from TYPO3 (src, the live
// source; a nil or built-in one refuses every write with
// typo3.ErrNotBesideTYPO3); refs finds file references.
func NewRecordWriter(client *Client, db *store.DB, src content.Source, refs FileReferences) (*RecordWriter, error) {
	if client == nil || db == nil || refs == nil {
		return nil, errors.New("bridge.NewRecordWriter: client, database and file references are required")
	}
	return &RecordWriter{client: client, local: content.NewWriter(db, src, dataHandlerDecides{}, nil), db: db, refs: refs}, nil
}

// dataHandlerDecides is the write check beside DataHandler: a deleted record
// or a workspace version is refused before TYPO3 is asked; the editor's
// rights — tables, fields, pages, languages, content types, locks,
// workspaces — DataHandler decides as the editor, and refuses with TYPO3's
// reason (reading them here too would cost a read of the user per write).
type dataHandlerDecides struct{}

func (dataHandlerDecides) AuthorizeWrite(_ context.Context, _ store.Querier, _ int64, rec content.Record, _ []string) error {
	switch {
	case rec.Deleted:
		return &access.DeniedError{Reason: fmt.Sprintf("%s:%d is deleted", rec.Table, rec.UID)}
	case rec.Workspace != 0:
		return &access.DeniedError{Reason: fmt.Sprintf("%s:%d is a workspace version", rec.Table, rec.UID)}
	}
	return nil
}

var _ content.RecordWriter = (*RecordWriter)(nil)

// Write applies req in a Waymark transaction of its own.
func (r *RecordWriter) Write(ctx context.Context, req content.WriteRequest) (content.Written, error) {
	var out content.Written
	err := r.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = r.WriteTx(ctx, tx, req)
		return err
	})
	return out, err
}

// WriteTx checks req inside tx against the record read live from TYPO3 and
// has the extension write it; TYPO3 commits first, tx after. A field
// changed in TYPO3 since the card showed it is a *content.ConflictError; a
// refusal of DataHandler (rights, validation, a locked record) is an
// *access.DeniedError with TYPO3's reason; TYPO3 not answering wraps
// content.ErrUnreachable, a lost answer content.ErrStateUnknown. Nothing is
// written in any of these cases, but the last, which a retry settles.
func (r *RecordWriter) WriteTx(ctx context.Context, tx *store.Tx, req content.WriteRequest) (content.Written, error) {
	if content.IsBuiltin(r.local.Source()) {
		return content.Written{}, typo3.ErrNotBesideTYPO3
	}
	rec, names, err := r.local.CheckTx(ctx, tx, req)
	if err != nil {
		return content.Written{}, err
	}
	out := content.Written{Table: req.Table, UID: req.UID, Changes: []content.Change{}}
	for _, f := range names {
		old, nv := rec.Fields[f], req.Fields[f]
		if shown, ok := req.Shown[f]; ok {
			old = shown
		}
		// A field changed in TYPO3 since the card was shown is refused by
		// the extension (it gets the shown value as the old one).
		if rec.Fields[f] != nv {
			out.Changes = append(out.Changes, content.Change{Field: f, Old: old, New: nv})
		}
	}
	retry := false
	if len(out.Changes) == 0 {
		// TYPO3 holds the new values already where the card showed others:
		// the retry of an approved call whose TYPO3 commit stood and whose
		// Waymark transaction did not (the process died between the two).
		// Sent again with its key, the extension answers already_applied and
		// the export's account is recorded now; a field someone else set to
		// the same value (a conflict: no key) is no change.
		for _, f := range names {
			if shown, ok := req.Shown[f]; ok && req.Key != "" && shown != req.Fields[f] && rec.Fields[f] == req.Fields[f] {
				out.Changes = append(out.Changes, content.Change{Field: f, Old: shown, New: req.Fields[f]})
			}
		}
		if len(out.Changes) == 0 {
			return out, nil
		}
		retry = true
	}
	key := req.Key
	if key == "" {
		// A write outside a run has no retry to recognise: a fresh key keeps
		// it to one application.
		var b [16]byte
		_, _ = rand.Read(b[:])
		key = "once/" + hex.EncodeToString(b[:])
	}
	// One request per TYPO3 row: the record's own columns, and a value on
	// its first file reference.
	type target struct {
		table string
		uid   int64
	}
	reqs := map[target]*ApplyRequest{}
	var order []target
	fieldOf := map[string]string{} // TYPO3 column → Waymark field, for a conflict
	for _, c := range out.Changes {
		col, ok := typo3.FieldColumn(req.Table, c.Field)
		if !ok {
			return content.Written{}, fmt.Errorf("%w: %s.%s has no TYPO3 column", content.ErrInvalid, req.Table, c.Field)
		}
		t := target{col.Table, req.UID}
		if col.FileReference != "" {
			ref, err := r.refs.FirstFileReference(ctx, req.Table, req.UID, col.FileReference)
			if err != nil {
				return content.Written{}, err
			}
			t.uid = ref
		}
		if reqs[t] == nil {
			reqs[t] = &ApplyRequest{User: req.User, Table: t.table, UID: t.uid, Fields: map[string]FieldChange{},
				Key: recordKey(key, t.table, t.uid)}
			order = append(order, t)
		}
		reqs[t].Fields[col.Column] = FieldChange{Old: c.Old, New: c.New}
		fieldOf[col.Table+"."+col.Column] = c.Field
	}
	for _, t := range order {
		applied, err := r.client.Apply(ctx, *reqs[t])
		var refused *RefusedError
		if retry && errors.As(err, &refused) && refused.Code == "conflict" {
			return content.Written{Table: req.Table, UID: req.UID, Changes: []content.Change{}}, nil
		}
		if err != nil {
			return content.Written{}, r.explain(req, t.table, fieldOf, err)
		}
		for col, fc := range applied.Fields {
			// TYPO3's TCA evaluation (trim, max) may have stored another
			// value than approved: the outcome says what TYPO3 holds.
			if f, ok := fieldOf[t.table+"."+col]; ok {
				for i := range out.Changes {
					if out.Changes[i].Field == f {
						out.Changes[i].New = fc.New
					}
				}
			}
		}
		out.Landing = landing(applied.Workspace)
	}
	// TYPO3 has committed: the export's account of the change (with the
	// values TYPO3 holds) commits with tx, as the run's record of the write does.
	if err := r.local.RecordAppliedTx(ctx, tx, req, rec, out.Changes, out.Landing, retry); err != nil {
		return content.Written{}, err
	}
	return out, nil
}

var _ content.Lander = (*RecordWriter)(nil)

// Landing asks TYPO3 where a write of user would land now: live, or the
// draft workspace TYPO3 puts her in (the card says so before the answer).
// In a draft workspace the card's values now are the record's there (her
// draft over live, as the extension compares them at the write), asked in
// the same request; fields in another TYPO3 table (a file reference's
// alternative text) keep the value read. TYPO3 not answering wraps
// content.ErrUnreachable.
func (r *RecordWriter) Landing(ctx context.Context, user int64, table string, uid int64, fields []string) (*content.Landing, error) {
	var rec *TargetRecord
	fieldOf := map[string]string{} // TYPO3 column → Waymark field
	for _, f := range fields {
		col, ok := typo3.FieldColumn(table, f)
		if !ok || col.FileReference != "" || col.Table != table {
			continue
		}
		if rec == nil {
			rec = &TargetRecord{Table: table, UID: uid}
		}
		rec.Columns = append(rec.Columns, col.Column)
		fieldOf[col.Column] = f
	}
	w, current, err := r.client.Target(ctx, user, rec)
	if err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) && refused.Code == "refused" {
			return nil, &access.DeniedError{Reason: "TYPO3: " + refused.Reason}
		}
		return nil, fmt.Errorf("%w: %w", content.ErrUnreachable, err)
	}
	l := landing(w)
	if !w.Live() && current != nil {
		l.Current = map[string]string{}
		for col, v := range current {
			if f, ok := fieldOf[col]; ok {
				l.Current[f] = v
			}
		}
	}
	return l, nil
}

// landing is where a write landed, in content.Written's terms.
func landing(w Workspace) *content.Landing {
	return &content.Landing{Workspace: w.ID, Title: w.Title}
}

// recordKey is the key of one record's part of an approved call, hashed
// when it would not fit the extension's 200 characters.
func recordKey(key, table string, uid int64) string {
	k := fmt.Sprintf("%s#%s:%d", key, table, uid)
	if len(k) > 200 {
		sum := sha256.Sum256([]byte(k))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	return k
}

// logPrefix is DataHandler's "[type.action]: " before each message of its
// error log, which the extension passes on.
var logPrefix = regexp.MustCompile(`(^|; )\[\d+\.\d+\]: `)

// typo3Words is DataHandler's reason without its log prefixes.
func typo3Words(reason string) string { return logPrefix.ReplaceAllString(reason, "$1") }

// explain turns the extension's answer into the content package's terms.
func (r *RecordWriter) explain(req content.WriteRequest, table string, fieldOf map[string]string, err error) error {
	var refused *RefusedError
	switch {
	case errors.As(err, &refused) && refused.Code == "conflict":
		field := fieldOf[table+"."+refused.Field]
		if field == "" {
			field = refused.Field
		}
		return &content.ConflictError{Source: "TYPO3", Table: req.Table, UID: req.UID, Field: field, Current: refused.Current}
	case errors.As(err, &refused) && refused.Code == "refused":
		return &access.DeniedError{Reason: "TYPO3 refused the change: " + typo3Words(refused.Reason)}
	case errors.As(err, &refused) && refused.Code == "unknown_record":
		return fmt.Errorf("%w: TYPO3: %s:%d is missing or deleted", content.ErrRefused, req.Table, req.UID)
	case errors.As(err, &refused) && (refused.Status == http.StatusUnauthorized || refused.Status == http.StatusServiceUnavailable):
		// A wrong secret or an extension without one: an operator's fault,
		// nothing written.
		return fmt.Errorf("%w: TYPO3 extension: %w", content.ErrUnreachable, err)
	case errors.Is(err, ErrUnreachable):
		return fmt.Errorf("%w: %w", content.ErrUnreachable, err)
	case errors.Is(err, ErrUnknownOutcome):
		return fmt.Errorf("%w: %w", content.ErrStateUnknown, err)
	}
	return fmt.Errorf("TYPO3 write of %s:%d: %w", req.Table, req.UID, err)
}
