package access

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"waymark/internal/content"
	"waymark/internal/store"
)

// ListGroups reads every group, ordered by uid, with lists never null.
// Beside TYPO3 these are TYPO3's groups (uid, title, subgroups) with the
// grants Waymark keeps for them; their rights are TYPO3's.
func ListGroups(ctx context.Context, dir Directory, q store.Querier) ([]Group, error) {
	if r := rosterOf(dir); r != nil {
		return rosterGroups(ctx, q, r)
	}
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

// GetGroup reads one group (beside TYPO3 as ListGroups does); ErrNoGroup
// when none has the uid.
func GetGroup(ctx context.Context, dir Directory, q store.Querier, uid int64) (Group, error) {
	if r := rosterOf(dir); r != nil {
		all, err := rosterGroups(ctx, q, r)
		if err != nil {
			return Group{}, err
		}
		if i := slices.IndexFunc(all, func(g Group) bool { return g.UID == uid }); i >= 0 {
			return all[i], nil
		}
		return Group{}, fmt.Errorf("group %d: %w", uid, ErrNoGroup)
	}
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
func CreateGroup(ctx context.Context, src content.Source, dir Directory, db *store.DB, g Group) (Group, error) {
	if External(dir) {
		return Group{}, ErrManagedElsewhere
	}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := store.LockSettingsTx(ctx, tx); err != nil {
			return err
		}
		if g.UID == 0 {
			if err := tx.QueryRow(ctx, "SELECT COALESCE(MAX(uid), 0) + 1 FROM be_groups").Scan(&g.UID); err != nil {
				return fmt.Errorf("next group uid: %w", err)
			}
		} else if _, err := GetGroup(ctx, dir, tx, g.UID); err == nil {
			return fmt.Errorf("uid: group %d: %w", g.UID, ErrExists)
		} else if !errors.Is(err, ErrNoGroup) {
			return err
		}
		return writeGroup(ctx, src, dir, tx, g)
	})
	if err != nil {
		return Group{}, err
	}
	return GetGroup(ctx, dir, db, g.UID)
}

// UpdateGroup replaces every field of group g.UID. Its members' rights
// change at once (the settings generation moves). It returns ErrNoGroup for
// an unknown uid and refuses what CreateGroup refuses, writing nothing.
func UpdateGroup(ctx context.Context, src content.Source, dir Directory, db *store.DB, g Group) (Group, error) {
	if External(dir) {
		return Group{}, ErrManagedElsewhere
	}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := store.LockSettingsTx(ctx, tx); err != nil {
			return err
		}
		if _, err := GetGroup(ctx, dir, tx, g.UID); err != nil {
			return err
		}
		return writeGroup(ctx, src, dir, tx, g)
	})
	if err != nil {
		return Group{}, err
	}
	return GetGroup(ctx, dir, db, g.UID)
}

func writeGroup(ctx context.Context, src content.Source, dir Directory, tx *store.Tx, g Group) error {
	// Every wrong field is reported at once (FieldErrors), in form order.
	var bad []error
	switch {
	case strings.TrimSpace(g.Title) == "":
		bad = append(bad, invalid("title", "must not be empty"))
	case len(g.Title) > 200:
		bad = append(bad, invalid("title", "at most 200 bytes, got %d", len(g.Title)))
	}
	if slices.Contains(g.Subgroups, g.UID) {
		bad = append(bad, invalid("subgroups", "a group cannot be its own subgroup (%d)", g.UID))
	}
	c := refChecker{ctx, content.OrBuiltin(src), OrBuiltin(dir), tx}
	for _, check := range []func() error{
		func() error { return c.tables("tablesSelect", g.TablesSelect) },
		func() error { return c.tables("tablesModify", g.TablesModify) },
		func() error { return c.tableFields("nonExcludeFields", g.NonExcludeFields) },
		func() error { return c.languages(g.Languages) },
		func() error { return c.mounts(g.Mounts) },
		func() error { return c.groups("subgroups", g.Subgroups) },
		func() error { return grants(g.Grants) },
	} {
		err := check()
		var fe *FieldError
		switch {
		case errors.As(err, &fe):
			if !slices.ContainsFunc(bad, func(b error) bool { var o *FieldError; return errors.As(b, &o) && o.Field == fe.Field }) {
				bad = append(bad, err)
			}
		case err != nil:
			return err
		}
	}
	if len(bad) > 0 {
		return FieldErrors(bad)
	}
	return PutGroupTx(ctx, tx, g)
}

func groupView(g Group) Group {
	g.TablesSelect, g.TablesModify, g.NonExcludeFields = nonNil(g.TablesSelect), nonNil(g.TablesModify), nonNil(g.NonExcludeFields)
	g.Languages, g.Mounts, g.Subgroups, g.Grants = nonNil(g.Languages), nonNil(g.Mounts), nonNil(g.Subgroups), nonNil(g.Grants)
	return g
}
