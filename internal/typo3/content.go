package typo3

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"waymark/internal/content"
)

// Content reads pages and content elements live from a TYPO3 database as
// Waymark's content records: the TYPO3 columns under Waymark's field names
// (see FieldColumn), hidden records included (hidden is a frontend flag).
type Content struct {
	db *sql.DB
	d  Dialect
}

// NewContent returns a Content over db, a TYPO3 database of dialect d.
func NewContent(db *sql.DB, d Dialect) (*Content, error) {
	if db == nil {
		return nil, errors.New("typo3 content: the database is nil")
	}
	if d != MariaDB && d != Postgres {
		return nil, fmt.Errorf("typo3 content: unknown dialect %q", d)
	}
	return &Content{db: db, d: d}, nil
}

// fieldOrder is the order of the fields read per table.
var fieldOrder = map[string][]string{
	"pages":      {"title", "navTitle", "slug", "seoTitle", "description", "keywords", "ogTitle", "ogDescription", "ogImage", "abstract"},
	"tt_content": {"CType", "header", "subheader", "bodytext", "colPos", "image", "imageAlt"},
}

// selectRecords is the SELECT list and FROM of table's records, aliased t.
func (c *Content) selectRecords(table string) (string, error) {
	fields, ok := fieldOrder[table]
	if !ok {
		return "", fmt.Errorf("typo3 content: table %q is not read (pages and tt_content are)", table)
	}
	q := c.d.quote
	parent := "l10n_parent"
	perms := "t.`perms_userid`, t.`perms_groupid`, t.`perms_user`, t.`perms_group`, t.`perms_everybody`"
	if table == "tt_content" {
		parent = "l18n_parent"
		perms = "0, 0, 0, 0, 0"
	}
	cols := []string{"t.`uid`", "t.`pid`", "t.`sys_language_uid`", "t." + q(parent), "t.`deleted`", "t.`t3ver_wsid`", "t.`editlock`", perms}
	for _, f := range fields {
		col, _ := FieldColumn(table, f)
		switch {
		case f == "image":
			cols = append(cols, "COALESCE((SELECT f.`name` FROM `sys_file_reference` r JOIN `sys_file` f ON f.`uid` = r.`uid_local` "+
				"WHERE r.`uid_foreign` = t.`uid` AND r.`tablenames` = 'tt_content' AND r.`fieldname` = 'image' AND r.`deleted` = 0 "+
				"ORDER BY r.`sorting_foreign`, r.`uid` LIMIT 1), '')")
		case col.FileReference != "":
			cols = append(cols, "COALESCE((SELECT r.`alternative` FROM `sys_file_reference` r "+
				"WHERE r.`uid_foreign` = t.`uid` AND r.`tablenames` = 'tt_content' AND r.`fieldname` = '"+col.FileReference+"' AND r.`deleted` = 0 "+
				"ORDER BY r.`sorting_foreign`, r.`uid` LIMIT 1), '')")
		case f == "colPos" || f == "ogImage":
			cols = append(cols, "t."+q(col.Column))
		default:
			cols = append(cols, "COALESCE(t."+q(col.Column)+", '')")
		}
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + q(table) + " t", nil
}

func (c *Content) scan(table string, sc interface{ Scan(...any) error }) (content.Record, error) {
	r := content.Record{Table: table, Fields: map[string]string{}}
	var deleted, editlock int64
	fields := fieldOrder[table]
	vals := make([]sql.NullString, len(fields))
	dst := []any{&r.UID, &r.PID, &r.Language, &r.L10nParent, &deleted, &r.Workspace, &editlock,
		&r.Owner, &r.Group, &r.Perms.User, &r.Perms.Group, &r.Perms.Everybody}
	for i := range vals {
		dst = append(dst, &vals[i])
	}
	if err := sc.Scan(dst...); err != nil {
		return content.Record{}, err
	}
	r.Deleted, r.EditLock = deleted != 0, editlock != 0
	for i, f := range fields {
		r.Fields[f] = vals[i].String
	}
	return r, nil
}

func (c *Content) collect(ctx context.Context, table, where string, args ...any) ([]content.Record, error) {
	sel, err := c.selectRecords(table)
	if err != nil {
		return nil, err
	}
	rs, err := c.db.QueryContext(ctx, c.d.rebind(sel+" WHERE "+where), args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []content.Record
	for rs.Next() {
		r, err := c.scan(table, rs)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// Get reads one record, deleted or not; content.ErrNotFound when none exists.
func (c *Content) Get(ctx context.Context, table string, uid int64) (content.Record, error) {
	recs, err := c.collect(ctx, table, "t.`uid` = ?", uid)
	if err != nil {
		return content.Record{}, fmt.Errorf("read %s:%d: %w", table, uid, err)
	}
	if len(recs) == 0 {
		return content.Record{}, fmt.Errorf("%s:%d: %w", table, uid, content.ErrNotFound)
	}
	return recs[0], nil
}

// OnPage lists the live, non-deleted records of table on page pid whose
// language is one of languages (all when none given); content elements in
// TYPO3's order (colPos, sorting), pages by sorting.
func (c *Content) OnPage(ctx context.Context, table string, pid int64, languages ...int64) ([]content.Record, error) {
	where := "t.`pid` = ? AND t.`deleted` = 0 AND t.`t3ver_wsid` = 0"
	args := []any{pid}
	if len(languages) > 0 {
		where += " AND t.`sys_language_uid` IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(languages)), ", ") + ")"
		for _, l := range languages {
			args = append(args, l)
		}
	}
	order := " ORDER BY t.`sorting`, t.`uid`"
	if table == "tt_content" {
		order = " ORDER BY t.`colPos`, t.`sorting`, t.`uid`"
	}
	out, err := c.collect(ctx, table, where+order, args...)
	if err != nil {
		return nil, fmt.Errorf("records on page %d: %w", pid, err)
	}
	return out, nil
}

// Translation returns the live translation of a default-language record
// into language, or content.ErrNotFound.
func (c *Content) Translation(ctx context.Context, table string, parent, language int64) (content.Record, error) {
	recs, err := c.collect(ctx, table, "t."+c.d.quote(parentColumn(table))+" = ? AND t.`sys_language_uid` = ? AND t.`deleted` = 0 AND t.`t3ver_wsid` = 0 ORDER BY t.`uid`",
		parent, language)
	if err != nil {
		return content.Record{}, fmt.Errorf("translation of %s:%d: %w", table, parent, err)
	}
	if len(recs) == 0 {
		return content.Record{}, fmt.Errorf("%s:%d in language %d: %w", table, parent, language, content.ErrNotFound)
	}
	return recs[0], nil
}

// TranslationLanguages lists the languages (> 0) of the live translations
// of record parent, in order.
func (c *Content) TranslationLanguages(ctx context.Context, table string, parent int64) ([]int64, error) {
	recs, err := c.collect(ctx, table, "t."+c.d.quote(parentColumn(table))+" = ? AND t.`sys_language_uid` > 0 AND t.`deleted` = 0 AND t.`t3ver_wsid` = 0", parent)
	if err != nil {
		return nil, fmt.Errorf("translations of %s:%d: %w", table, parent, err)
	}
	var out []int64
	for _, r := range recs {
		if !slices.Contains(out, r.Language) {
			out = append(out, r.Language)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Heads reads the records of table among uids, deleted or not, in no order.
func (c *Content) Heads(ctx context.Context, table string, uids []int64) ([]content.Record, error) {
	var out []content.Record
	for chunk := range slices.Chunk(uids, 500) {
		marks := make([]string, len(chunk))
		args := make([]any, len(chunk))
		for i, u := range chunk {
			marks[i], args[i] = "?", u
		}
		recs, err := c.collect(ctx, table, "t.`uid` IN ("+strings.Join(marks, ", ")+")", args...)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		out = append(out, recs...)
	}
	return out, nil
}

// Tree lists the live, non-deleted default-language pages below root (root
// included) as uid → pid, the page tree built from pid.
func (c *Content) Tree(ctx context.Context, root int64) (map[int64]int64, error) {
	tree := map[int64]int64{}
	level := []int64{root}
	rs := c.db.QueryRowContext(ctx, c.d.rebind("SELECT `pid` FROM `pages` WHERE `uid` = ? AND `deleted` = 0 AND `t3ver_wsid` = 0 AND `sys_language_uid` = 0"), root)
	var pid int64
	if err := rs.Scan(&pid); errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("page tree of %d: %w", root, content.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("page tree of %d: %w", root, err)
	}
	tree[root] = pid
	for depth := 0; len(level) > 0 && depth < maxDepth; depth++ {
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(level)), ", ")
		args := make([]any, len(level))
		for i, u := range level {
			args[i] = u
		}
		rows, err := c.db.QueryContext(ctx, c.d.rebind("SELECT `uid`, `pid` FROM `pages` WHERE `pid` IN ("+marks+
			") AND `deleted` = 0 AND `t3ver_wsid` = 0 AND `sys_language_uid` = 0"), args...)
		if err != nil {
			return nil, fmt.Errorf("page tree of %d: %w", root, err)
		}
		level = nil
		for rows.Next() {
			var uid, p int64
			if err := rows.Scan(&uid, &p); err != nil {
				rows.Close()
				return nil, fmt.Errorf("page tree of %d: %w", root, err)
			}
			if _, seen := tree[uid]; !seen {
				tree[uid] = p
				level = append(level, uid)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("page tree of %d: %w", root, err)
		}
	}
	return tree, nil
}

// parentColumn is the table's transOrigPointerField: tt_content keeps
// TYPO3's historical spelling l18n_parent.
func parentColumn(table string) string {
	if table == "tt_content" {
		return "l18n_parent"
	}
	return "l10n_parent"
}
