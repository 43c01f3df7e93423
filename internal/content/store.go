package content

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"waymark/internal/store"
)

const recordColumns = `tbl, uid, pid, language, l10n_parent, deleted, workspace, owner_uid, group_uid,
	perms_user, perms_group, perms_everybody, fields`

func scanRecord(sc interface{ Scan(...any) error }) (Record, error) {
	var r Record
	var fields string
	if err := sc.Scan(&r.Table, &r.UID, &r.PID, &r.Language, &r.L10nParent, &r.Deleted, &r.Workspace,
		&r.Owner, &r.Group, &r.Perms.User, &r.Perms.Group, &r.Perms.Everybody, &fields); err != nil {
		return Record{}, err
	}
	f, err := decodeFields(fields)
	if err != nil {
		return Record{}, fmt.Errorf("%s:%d: %w", r.Table, r.UID, err)
	}
	r.Fields = f
	return r, nil
}

// Get reads one record, deleted or not. It returns ErrNotFound when none exists.
func (Builtin) Get(ctx context.Context, q store.Querier, table string, uid int64) (Record, error) {
	r, err := scanRecord(q.QueryRow(ctx, "SELECT "+recordColumns+" FROM records WHERE tbl = ? AND uid = ?", table, uid))
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, fmt.Errorf("%s:%d: %w", table, uid, ErrNotFound)
	}
	if err != nil {
		return Record{}, fmt.Errorf("read %s:%d: %w", table, uid, err)
	}
	return r, nil
}

// OnPage lists the live, non-deleted records of table on page pid whose
// language is one of languages (pass LanguageAll to include all-languages
// records), ordered by uid.
func (Builtin) OnPage(ctx context.Context, q store.Querier, table string, pid int64, languages ...int64) ([]Record, error) {
	query := "SELECT " + recordColumns + " FROM records WHERE tbl = ? AND pid = ? AND deleted = FALSE AND workspace = 0"
	args := []any{table, pid}
	if len(languages) > 0 {
		query += " AND language IN ("
		for i, l := range languages {
			if i > 0 {
				query += ", "
			}
			query += "?"
			args = append(args, l)
		}
		query += ")"
	}
	out, err := store.Collect(ctx, q, scanRecord, query+" ORDER BY uid", args...)
	if err != nil {
		return nil, fmt.Errorf("records on page %d: %w", pid, err)
	}
	return out, nil
}

// GetWithOnPage is Get of record uid of table and OnPage of onTable on page
// uid in one statement (a UNION ALL): the record, deleted or not, and the
// live records of onTable on it in one of languages, ordered by uid.
// ErrNotFound when the record does not exist.
func (Builtin) GetWithOnPage(ctx context.Context, q store.Querier, table string, uid int64, onTable string, languages ...int64) (Record, []Record, error) {
	query := "SELECT 0, " + recordColumns + " FROM records WHERE tbl = ? AND uid = ? UNION ALL SELECT 1, " + recordColumns +
		" FROM records WHERE tbl = ? AND pid = ? AND deleted = FALSE AND workspace = 0"
	args := []any{table, uid, onTable, uid}
	if len(languages) > 0 {
		query += " AND language IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(languages)), ", ") + ")"
		for _, l := range languages {
			args = append(args, l)
		}
	}
	rows, err := q.Query(ctx, query+" ORDER BY 1, 3", args...)
	if err != nil {
		return Record{}, nil, fmt.Errorf("read %s:%d and the %s on it: %w", table, uid, onTable, err)
	}
	defer rows.Close()
	var (
		rec   Record
		found bool
	)
	on := []Record{}
	for rows.Next() {
		var part int
		r, err := scanRecord(partScanner{rows, &part})
		if err != nil {
			return Record{}, nil, fmt.Errorf("read %s:%d and the %s on it: %w", table, uid, onTable, err)
		}
		if part == 0 {
			rec, found = r, true
		} else {
			on = append(on, r)
		}
	}
	if err := rows.Err(); err != nil {
		return Record{}, nil, fmt.Errorf("read %s:%d and the %s on it: %w", table, uid, onTable, err)
	}
	if !found {
		return Record{}, nil, fmt.Errorf("%s:%d: %w", table, uid, ErrNotFound)
	}
	return rec, on, nil
}

// partScanner scans a row whose first column (into part) precedes those its
// destinations take.
type partScanner struct {
	sc   interface{ Scan(...any) error }
	part *int
}

func (p partScanner) Scan(dest ...any) error {
	return p.sc.Scan(append([]any{p.part}, dest...)...)
}

// Translation returns the live translation of a default-language record into
// language, or ErrNotFound.
func (Builtin) Translation(ctx context.Context, q store.Querier, table string, parent, language int64) (Record, error) {
	r, err := scanRecord(q.QueryRow(ctx, "SELECT "+recordColumns+` FROM records
		WHERE tbl = ? AND l10n_parent = ? AND language = ? AND deleted = FALSE AND workspace = 0 ORDER BY uid LIMIT 1`,
		table, parent, language))
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, fmt.Errorf("%s:%d in language %d: %w", table, parent, language, ErrNotFound)
	}
	return r, err
}

// PutTx inserts or replaces a record as a whole (fixture import). It records no history.
func PutTx(ctx context.Context, q store.Querier, r Record, now int64) error {
	_, err := q.Exec(ctx, `INSERT INTO records (`+recordColumns+`, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tbl, uid) DO UPDATE SET pid = excluded.pid, language = excluded.language,
			l10n_parent = excluded.l10n_parent, deleted = excluded.deleted, workspace = excluded.workspace,
			owner_uid = excluded.owner_uid, group_uid = excluded.group_uid, perms_user = excluded.perms_user,
			perms_group = excluded.perms_group, perms_everybody = excluded.perms_everybody,
			fields = excluded.fields, updated_at = excluded.updated_at`,
		r.Table, r.UID, r.PID, r.Language, r.L10nParent, r.Deleted, r.Workspace, r.Owner, r.Group,
		r.Perms.User, r.Perms.Group, r.Perms.Everybody, encodeFields(r.Fields), now)
	if err != nil {
		return fmt.Errorf("store %s:%d: %w", r.Table, r.UID, err)
	}
	return nil
}

// Language returns the language uid of a record, deleted or not; ok is
// false when there is none.
func (Builtin) Language(ctx context.Context, q store.Querier, table string, uid int64) (lang int64, ok bool, err error) {
	err = q.QueryRow(ctx, "SELECT language FROM records WHERE tbl = ? AND uid = ?", table, uid).Scan(&lang)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("language of %s:%d: %w", table, uid, err)
	}
	return lang, true, nil
}

// LiveAmong returns which of uids are live records of table (in the live
// workspace, not deleted).
func (Builtin) LiveAmong(ctx context.Context, q store.Querier, table string, uids []int64) (map[int64]bool, error) {
	live := map[int64]bool{}
	err := store.EachIn(uids, func(args []any, in string) error {
		rows, err := q.Query(ctx, `SELECT uid FROM records WHERE tbl = ? AND deleted = FALSE AND workspace = 0
			AND uid IN (`+in+`)`, append([]any{table}, args...)...)
		if err != nil {
			return fmt.Errorf("live records of %s: %w", table, err)
		}
		defer rows.Close()
		for rows.Next() {
			var uid int64
			if err := rows.Scan(&uid); err != nil {
				return fmt.Errorf("live records of %s: %w", table, err)
			}
			live[uid] = true
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return live, nil
}

// Heads reads the records of table among uids without their fields: identity,
// tree, language, workspace, deletion and permission columns, deleted or not,
// in no order — what a permission check needs of many pages at once.
func (Builtin) Heads(ctx context.Context, q store.Querier, table string, uids []int64) ([]Record, error) {
	var out []Record
	err := store.EachIn(uids, func(args []any, in string) error {
		recs, err := store.Collect(ctx, q, func(sc store.Scanner) (Record, error) {
			r := Record{Table: table}
			err := sc.Scan(&r.UID, &r.PID, &r.Language, &r.L10nParent, &r.Deleted, &r.Workspace, &r.Owner,
				&r.Group, &r.Perms.User, &r.Perms.Group, &r.Perms.Everybody)
			return r, err
		}, `SELECT uid, pid, language, l10n_parent, deleted, workspace, owner_uid, group_uid,
			perms_user, perms_group, perms_everybody FROM records WHERE tbl = ? AND uid IN (`+in+`)`, append([]any{table}, args...)...)
		out = append(out, recs...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	return out, nil
}

// TranslationLanguages lists the languages (> 0) of the live translations of
// record parent of table, in order.
func (Builtin) TranslationLanguages(ctx context.Context, q store.Querier, table string, parent int64) ([]int64, error) {
	out, err := store.Collect(ctx, q, store.Column[int64], `SELECT DISTINCT language FROM records WHERE tbl = ? AND l10n_parent = ?
		AND language > 0 AND deleted = FALSE AND workspace = 0 ORDER BY language`, table, parent)
	if err != nil {
		return nil, fmt.Errorf("translations of %s:%d: %w", table, parent, err)
	}
	return out, nil
}
