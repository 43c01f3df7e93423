package typo3

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Change is one approved change of a text column of a live TYPO3 record.
type Change struct {
	Table  string // "pages" or "tt_content"
	UID    int64
	Field  string // a Waymark field of the table (see FieldColumn), kept on the record itself
	Old    string // the value the editor was shown
	New    string
	UserID int64 // the backend user the change is recorded for
	// Key makes the write idempotent: it is stored in the sys_history row
	// (correlation_id) in the same transaction, and a change whose key is
	// found there is not applied again.
	Key string
}

// WriteResult says what Apply did.
type WriteResult struct {
	Applied        bool  // this call wrote the change
	AlreadyApplied bool  // an earlier call with the same key did; nothing was written
	HistoryUID     int64 // the sys_history row of the change
	FlushedPages   []int64
}

// ConflictError is returned when the column no longer holds the value the
// editor was shown: it was changed in TYPO3 since, and is not overwritten.
type ConflictError struct {
	Table   string
	UID     int64
	Field   string
	Current string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s:%d %s was changed in TYPO3 since it was shown; nothing was written", e.Table, e.UID, e.Field)
}

// ErrUnknownRecord is returned by Apply for a record that is missing,
// deleted or not live.
var ErrUnknownRecord = errors.New("unknown record")

// ErrStateUnknown is returned when the commit of a write failed: it may or
// may not have been applied. Retrying with the same Key is safe.
var ErrStateUnknown = errors.New("the TYPO3 write may or may not have been applied")

// writableFields are the fields Apply may change: text columns on the
// record's own row, and the alternative text of a content element's first
// image reference.
var writableFields = map[string][]string{
	"pages":      {"title", "navTitle", "seoTitle", "description", "keywords", "ogTitle", "ogDescription", "abstract"},
	"tt_content": {"header", "subheader", "bodytext", "imageAlt"},
}

// History actions and sys_log values of a record update, as TYPO3's
// RecordHistoryStore and DataHandler write them.
const (
	historyActionModify = 2
	logTypeDB           = 1
	logActionUpdate     = 2
)

// Writer writes approved changes into a TYPO3 database as TYPO3's
// DataHandler would leave them: the column and tstamp, a sys_history row,
// a sys_log entry, and the page cache of the record's page flushed.
type Writer struct {
	db  *sql.DB
	d   Dialect
	now func() time.Time
	// Test holds the hooks tests set; zero in production.
	Test WriterTest
}

// WriterTest holds the Writer's test hooks.
type WriterTest struct {
	// BeforeCommit runs when everything is written and the TYPO3
	// transaction is about to commit: where a test kills the writer.
	BeforeCommit func()
}

// NewWriter returns a Writer over db, a TYPO3 database of dialect d; now
// stamps the rows (nil means time.Now).
func NewWriter(db *sql.DB, d Dialect, now func() time.Time) (*Writer, error) {
	if db == nil {
		return nil, errors.New("typo3 writer: the database is nil")
	}
	if d != MariaDB && d != Postgres {
		return nil, fmt.Errorf("typo3 writer: unknown dialect %q", d)
	}
	if now == nil {
		now = time.Now
	}
	return &Writer{db: db, d: d, now: now}, nil
}

// Apply writes c in one TYPO3 transaction, or nothing: the record row is
// locked, the key looked up in sys_history (found: AlreadyApplied), the
// current value compared with c.Old (different: *ConflictError), then the
// column and tstamp are updated, the history and log rows inserted and the
// page cache entries of the record's page (and for a page its parent, whose
// menus show it) deleted.
func (w *Writer) Apply(ctx context.Context, c Change) (WriteResult, error) {
	rs, err := w.ApplyAll(ctx, []Change{c})
	if err != nil {
		return WriteResult{}, err
	}
	return rs[0], nil
}

// ApplyAll writes the changes (the fields of one approved card) in one
// TYPO3 transaction, each as Apply does, or none of them: one conflict or
// fault rolls back all. Each change needs a key of its own.
func (w *Writer) ApplyAll(ctx context.Context, cs []Change) ([]WriteResult, error) {
	if len(cs) == 0 {
		return nil, errors.New("typo3 write: no change")
	}
	cols := make([]Column, len(cs))
	for i, c := range cs {
		col, err := c.column()
		if err != nil {
			return nil, err
		}
		cols[i] = col
	}
	c := cs[0]
	tx, err := w.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return nil, fmt.Errorf("typo3 write %s:%d: %w", c.Table, c.UID, err)
	}
	defer tx.Rollback()
	out := make([]WriteResult, len(cs))
	for i, c := range cs {
		if out[i], err = w.applyTx(ctx, tx, c, cols[i]); err != nil {
			return nil, err
		}
	}
	if w.Test.BeforeCommit != nil {
		w.Test.BeforeCommit()
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("typo3 write %s:%d: commit: %w: %w", c.Table, c.UID, ErrStateUnknown, err)
	}
	return out, nil
}

// applyTx writes c inside tx (Apply's steps 1 to 4); the caller commits.
func (w *Writer) applyTx(ctx context.Context, tx *sql.Tx, c Change, col Column) (WriteResult, error) {
	// The record row is locked first, whatever row holds the value: writers
	// of one record queue here.
	value := "COALESCE(" + w.d.quote(col.Column) + ", '')"
	if col.FileReference != "" {
		value = "''"
	}
	q := w.d.rebind(fmt.Sprintf("SELECT %s, `pid`, `sys_language_uid`, %s FROM %s "+
		"WHERE `uid` = ? AND `deleted` = 0 AND `t3ver_wsid` = 0 FOR UPDATE",
		value, w.d.quote(parentColumn(c.Table)), w.d.quote(c.Table)))
	var current string
	var pid, lang, l10nParent int64
	err := tx.QueryRowContext(ctx, q, c.UID).Scan(&current, &pid, &lang, &l10nParent)
	if errors.Is(err, sql.ErrNoRows) {
		return WriteResult{}, fmt.Errorf("typo3 write %s:%d: %w", c.Table, c.UID, ErrUnknownRecord)
	}
	if err != nil {
		return WriteResult{}, fmt.Errorf("typo3 write %s:%d: read: %w", c.Table, c.UID, err)
	}
	// target is the row that holds the value: the record, or its first file reference.
	target, targetUID := c.Table, c.UID
	if col.FileReference != "" {
		target = col.Table
		err = tx.QueryRowContext(ctx, w.d.rebind("SELECT `uid`, COALESCE(`alternative`, '') FROM `sys_file_reference` "+
			"WHERE `uid_foreign` = ? AND `tablenames` = ? AND `fieldname` = ? AND `deleted` = 0 AND `t3ver_wsid` = 0 "+
			"ORDER BY `sorting_foreign`, `uid` LIMIT 1 FOR UPDATE"), c.UID, c.Table, col.FileReference).Scan(&targetUID, &current)
		if errors.Is(err, sql.ErrNoRows) {
			return WriteResult{}, fmt.Errorf("typo3 write %s:%d: %s: the record has no %s file", c.Table, c.UID, c.Field, col.FileReference)
		}
		if err != nil {
			return WriteResult{}, fmt.Errorf("typo3 write %s:%d: read file reference: %w", c.Table, c.UID, err)
		}
	}
	correlation := "waymark:" + c.Key
	var done int64
	// By record first: TYPO3's index on (tablename, recuid) finds it in a large sys_history.
	err = tx.QueryRowContext(ctx, w.d.rebind("SELECT `uid` FROM `sys_history` WHERE `tablename` = ? AND `recuid` = ? AND `correlation_id` = ?"),
		target, targetUID, correlation).Scan(&done)
	if err == nil {
		return WriteResult{AlreadyApplied: true, HistoryUID: done}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return WriteResult{}, fmt.Errorf("typo3 write %s:%d: history: %w", c.Table, c.UID, err)
	}
	if current != c.Old {
		return WriteResult{}, &ConflictError{Table: c.Table, UID: c.UID, Field: c.Field, Current: current}
	}

	now := w.now().Unix()
	upd := w.d.rebind(fmt.Sprintf("UPDATE %s SET %s = ?, `tstamp` = ? WHERE `uid` = ?", w.d.quote(target), w.d.quote(col.Column)))
	if _, err := tx.ExecContext(ctx, upd, c.New, now, targetUID); err != nil {
		return WriteResult{}, fmt.Errorf("typo3 write %s:%d: update: %w", c.Table, c.UID, err)
	}
	data, _ := json.Marshal(map[string]map[string]string{"oldRecord": {col.Column: c.Old}, "newRecord": {col.Column: c.New}})
	hist := row{table: "sys_history"}
	hist.set("tstamp", now).set("actiontype", historyActionModify).set("usertype", "BE").set("userid", c.UserID).
		set("recuid", targetUID).set("tablename", target).set("history_data", string(data)).set("workspace", 0).
		set("correlation_id", correlation)
	historyUID, err := w.insertReturningUID(ctx, tx, hist)
	if err != nil {
		return WriteResult{}, fmt.Errorf("typo3 write %s:%d: %w", c.Table, c.UID, err)
	}
	page := pid
	if c.Table == "pages" {
		page = c.UID
		if lang > 0 && l10nParent > 0 {
			page = l10nParent
		}
	}
	logData, _ := json.Marshal(map[string]any{"table": target, "uid": targetUID, "field": col.Column})
	logRow := row{table: "sys_log"}
	logRow.set("tstamp", now).set("userid", c.UserID).set("action", logActionUpdate).set("recuid", targetUID).
		set("tablename", target).set("recpid", pid).set("error", 0).set("type", logTypeDB).set("channel", "content").
		set("level", "info").set("details", "Record {table}:{uid} was updated by Waymark").set("details_nr", 10).
		set("log_data", string(logData)).set("event_pid", page).set("workspace", 0)
	if err := logRow.insert(ctx, tx, w.d); err != nil {
		return WriteResult{}, fmt.Errorf("typo3 write %s:%d: %w", c.Table, c.UID, err)
	}
	flush := []int64{page}
	if c.Table == "pages" && pid > 0 && pid != page {
		flush = append(flush, pid)
	}
	for _, p := range flush {
		if err := w.flushPage(ctx, tx, p); err != nil {
			return WriteResult{}, fmt.Errorf("typo3 write %s:%d: %w", c.Table, c.UID, err)
		}
	}
	return WriteResult{Applied: true, HistoryUID: historyUID, FlushedPages: flush}, nil
}

func (c Change) column() (Column, error) {
	for _, f := range writableFields[c.Table] {
		if f == c.Field {
			col, _ := FieldColumn(c.Table, f)
			if strings.TrimSpace(c.Key) == "" || len(c.Key) > 200 {
				return Column{}, fmt.Errorf("typo3 write %s:%d: the idempotency key must have 1 to 200 characters", c.Table, c.UID)
			}
			return col, nil
		}
	}
	return Column{}, fmt.Errorf("typo3 write: %s.%s is not a text field Waymark writes", c.Table, c.Field)
}

func (w *Writer) insertReturningUID(ctx context.Context, tx *sql.Tx, r row) (int64, error) {
	if w.d == MariaDB {
		var cols, marks []string
		for i, c := range r.cols {
			cols = append(cols, w.d.quote(c))
			marks = append(marks, w.d.placeholder(i+1))
		}
		res, err := tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", w.d.quote(r.table),
			strings.Join(cols, ", "), strings.Join(marks, ", ")), r.vals...)
		if err != nil {
			return 0, fmt.Errorf("insert into %s: %w", r.table, err)
		}
		return res.LastInsertId()
	}
	var cols, marks []string
	for i, c := range r.cols {
		cols = append(cols, w.d.quote(c))
		marks = append(marks, w.d.placeholder(i+1))
	}
	var uid int64
	err := tx.QueryRowContext(ctx, fmt.Sprintf(`INSERT INTO %s (%s) VALUES (%s) RETURNING "uid"`, w.d.quote(r.table),
		strings.Join(cols, ", "), strings.Join(marks, ", ")), r.vals...).Scan(&uid)
	if err != nil {
		return 0, fmt.Errorf("insert into %s: %w", r.table, err)
	}
	return uid, nil
}

// flushPage deletes the page cache entries tagged pageId_<page>, as TYPO3's
// database cache backend flushes a tag: the entries and all their tags.
func (w *Writer) flushPage(ctx context.Context, tx *sql.Tx, page int64) error {
	rs, err := tx.QueryContext(ctx, w.d.rebind("SELECT DISTINCT `identifier` FROM `cache_pages_tags` WHERE `tag` = ?"),
		"pageId_"+strconv.FormatInt(page, 10))
	if err != nil {
		return fmt.Errorf("page cache of %d: %w", page, err)
	}
	var idents []any
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			rs.Close()
			return fmt.Errorf("page cache of %d: %w", page, err)
		}
		idents = append(idents, id)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return fmt.Errorf("page cache of %d: %w", page, err)
	}
	if len(idents) == 0 {
		return nil
	}
	marks := make([]string, len(idents))
	for i := range idents {
		marks[i] = w.d.placeholder(i + 1)
	}
	in := strings.Join(marks, ", ")
	for _, t := range []string{"cache_pages", "cache_pages_tags"} {
		q := fmt.Sprintf("DELETE FROM %s WHERE %s IN (%s)", w.d.quote(t), w.d.quote("identifier"), in)
		if _, err := tx.ExecContext(ctx, q, idents...); err != nil {
			return fmt.Errorf("page cache of %d: %s: %w", page, t, err)
		}
	}
	return nil
}
