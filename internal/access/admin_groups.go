package access

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"waymark/internal/store"
)

// ListGroups reads every group, ordered by uid, with lists never null.
func ListGroups(ctx context.Context, q store.Querier) ([]Group, error) {
	all, err := LoadGroups(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]Group, 0, len(all))
	for _, g := range all {
		out = append(out, groupView(g))
	}
	slices.SortFunc(out, func(a, b Group) int { return cmp.Compare(a.UID, b.UID) })
	return out, nil
}

// GetGroup reads one group; ErrNoGroup when none has the uid.
func GetGroup(ctx context.Context, q store.Querier, uid int64) (Group, error) {
	all, err := LoadGroups(ctx, q)
	if err != nil {
		return Group{}, err
	}
	g, ok := all[uid]
	if !ok {
		return Group{}, fmt.Errorf("group %d: %w", uid, ErrNoGroup)
	}
	return groupView(g), nil
}

// CreateGroup stores a new group (a zero UID takes the next free one),
// refusing bad input with a *FieldError and writing nothing.
func CreateGroup(ctx context.Context, db *store.DB, g Group) (Group, error) {
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := store.LockSettingsTx(ctx, tx); err != nil {
			return err
		}
		if g.UID == 0 {
			if err := tx.QueryRow(ctx, "SELECT COALESCE(MAX(uid), 0) + 1 FROM be_groups").Scan(&g.UID); err != nil {
				return fmt.Errorf("next group uid: %w", err)
			}
		} else if _, err := GetGroup(ctx, tx, g.UID); err == nil {
			return fmt.Errorf("uid: group %d: %w", g.UID, ErrExists)
		} else if !errors.Is(err, ErrNoGroup) {
			return err
		}
		return writeGroup(ctx, tx, g)
	})
	if err != nil {
		return Group{}, err
	}
	return GetGroup(ctx, db, g.UID)
}

// UpdateGroup replaces every field of group g.UID. Its members' rights
// change at once (the settings generation moves). It returns ErrNoGroup for
// an unknown uid and refuses what CreateGroup refuses, writing nothing.
func UpdateGroup(ctx context.Context, db *store.DB, g Group) (Group, error) {
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := store.LockSettingsTx(ctx, tx); err != nil {
			return err
		}
		if _, err := GetGroup(ctx, tx, g.UID); err != nil {
			return err
		}
		return writeGroup(ctx, tx, g)
	})
	if err != nil {
		return Group{}, err
	}
	return GetGroup(ctx, db, g.UID)
}

func writeGroup(ctx context.Context, tx *store.Tx, g Group) error {
	switch {
	case strings.TrimSpace(g.Title) == "":
		return invalid("title", "must not be empty")
	case len(g.Title) > 200:
		return invalid("title", "at most 200 bytes, got %d", len(g.Title))
	case slices.Contains(g.Subgroups, g.UID):
		return invalid("subgroups", "a group cannot be its own subgroup (%d)", g.UID)
	}
	c := refChecker{ctx, tx}
	for _, check := range []func() error{
		func() error { return c.tables("tablesSelect", g.TablesSelect) },
		func() error { return c.tables("tablesModify", g.TablesModify) },
		func() error { return c.tableFields("nonExcludeFields", g.NonExcludeFields) },
		func() error { return c.languages(g.Languages) },
		func() error { return c.mounts(g.Mounts) },
		func() error { return c.groups("subgroups", g.Subgroups) },
		func() error { return grants(g.Grants) },
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return PutGroupTx(ctx, tx, g)
}

func groupView(g Group) Group {
	g.TablesSelect, g.TablesModify, g.NonExcludeFields = nonNil(g.TablesSelect), nonNil(g.TablesModify), nonNil(g.NonExcludeFields)
	g.Languages, g.Mounts, g.Subgroups, g.Grants = nonNil(g.Languages), nonNil(g.Mounts), nonNil(g.Subgroups), nonNil(g.Grants)
	return g
}
