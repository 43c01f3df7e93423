package live

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// FirstFileReference is the uid of the first live file reference of
// table:uid in fieldname (the row that holds its alternative text), in
// the order TYPO3 shows them.
func (t *TYPO3) FirstFileReference(ctx context.Context, table string, uid int64, fieldname string) (int64, error) {
	var ref int64
	err := t.db.QueryRowContext(ctx, t.d.Rebind("SELECT `uid` FROM `sys_file_reference` "+
		"WHERE `uid_foreign` = ? AND `tablenames` = ? AND `fieldname` = ? AND `deleted` = 0 AND `t3ver_wsid` = 0 "+
		"ORDER BY `sorting_foreign`, `uid` LIMIT 1"), uid, table, fieldname).Scan(&ref)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%s:%d has no %s file", table, uid, fieldname)
	}
	if err != nil {
		return 0, t.reached(ctx, fmt.Errorf("read the file reference of %s:%d: %w", table, uid, err))
	}
	return ref, nil
}
