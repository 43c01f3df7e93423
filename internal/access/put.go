package access

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"waymark/internal/store"
)

// PutUserTx inserts or replaces a user as a whole (fixture import), with the
// given bcrypt password hash ("" = no password login). Lists are stored as JSON
// arrays, never null; an empty backend language is stored as "en".
func PutUserTx(ctx context.Context, q store.Querier, u User, passwordHash string) error {
	_, err := q.Exec(ctx, `INSERT INTO be_users (uid, username, password_hash, admin, disabled, service_account,
			backend_language, group_uids, languages, mounts, grants)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (uid) DO UPDATE SET username = excluded.username, password_hash = excluded.password_hash,
			admin = excluded.admin, disabled = excluded.disabled, service_account = excluded.service_account,
			backend_language = excluded.backend_language, group_uids = excluded.group_uids,
			languages = excluded.languages, mounts = excluded.mounts, grants = excluded.grants`,
		u.UID, u.Username, passwordHash, u.Admin, u.Disabled, u.ServiceAccount, cmp.Or(u.BackendLanguage, "en"),
		jsonList(u.Groups), jsonList(u.Languages), jsonList(u.Mounts), jsonList(u.Grants))
	if err != nil {
		return fmt.Errorf("store user %d: %w", u.UID, err)
	}
	return nil
}

// PutGroupTx inserts or replaces a group as a whole (fixture import). Lists are
// stored as JSON arrays, never null.
func PutGroupTx(ctx context.Context, q store.Querier, g Group) error {
	_, err := q.Exec(ctx, `INSERT INTO be_groups (uid, title, tables_select, tables_modify, non_exclude_fields,
			languages, mounts, subgroups, grants)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (uid) DO UPDATE SET title = excluded.title, tables_select = excluded.tables_select,
			tables_modify = excluded.tables_modify, non_exclude_fields = excluded.non_exclude_fields,
			languages = excluded.languages, mounts = excluded.mounts, subgroups = excluded.subgroups,
			grants = excluded.grants`,
		g.UID, g.Title, jsonList(g.TablesSelect), jsonList(g.TablesModify), jsonList(g.NonExcludeFields),
		jsonList(g.Languages), jsonList(g.Mounts), jsonList(g.Subgroups), jsonList(g.Grants))
	if err != nil {
		return fmt.Errorf("store group %d: %w", g.UID, err)
	}
	return nil
}

// PasswordHash returns the stored bcrypt password hash of a user ("" when the
// user has no password). It returns ErrNoUser when the user does not exist.
func PasswordHash(ctx context.Context, q store.Querier, uid int64) (string, error) {
	var h string
	err := q.QueryRow(ctx, "SELECT password_hash FROM be_users WHERE uid = ?", uid).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNoUser
	}
	if err != nil {
		return "", fmt.Errorf("password of user %d: %w", uid, err)
	}
	return h, nil
}

// jsonList encodes a list as a JSON array; nil becomes "[]".
func jsonList[T int64 | string](l []T) string {
	if len(l) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(l) // slices of int64 or string always marshal
	return string(b)
}
