package access

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"waymark/internal/store"
)

// Roster is what a directory beside Waymark (TYPO3) tells Waymark's
// administration: every user and group it has, as they are there. The
// administration lists them, and sets Waymark's grants on them, though
// only some have a row in Waymark yet.
type Roster interface {
	// UserUIDs lists the uids of the directory's users that are not
	// deleted, ascending.
	UserUIDs(ctx context.Context) ([]int64, error)
	// RosterGroups lists the directory's groups that are not deleted, by
	// uid, with their uid, title and subgroups.
	RosterGroups(ctx context.Context) ([]Group, error)
}

// rosterOf returns q's directory's roster when the users come from beside
// Waymark, or nil.
func rosterOf(dir Directory) Roster {
	if !External(dir) {
		return nil
	}
	r, _ := dir.(Roster)
	return r
}

// SetUserGrants replaces the grants Waymark keeps for user uid
// (GrantApprove, GrantSkillApprove) and changes nothing else. It is the one
// change of a user Waymark's administration makes beside TYPO3, where the
// account and its rights are TYPO3's: there the user must exist in TYPO3,
// and Waymark's row under its uid is made when missing (KeepUserTx). It
// refuses an unknown grant with a *FieldError and an unknown user with
// ErrNoUser, writing nothing.
func SetUserGrants(ctx context.Context, dir Directory, db *store.DB, uid int64, gs []string) (Account, error) {
	if err := grants(gs); err != nil {
		return Account{}, err
	}
	u, err := OrBuiltin(dir).LoadUser(ctx, db, uid)
	if err != nil {
		return Account{}, err
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		if err := store.LockSettingsTx(ctx, tx); err != nil {
			return err
		}
		if External(dir) {
			if err := KeepUserTx(ctx, tx, uid, u.Username); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, "UPDATE be_users SET grants = ? WHERE uid = ?", jsonList(gs), uid); err != nil {
			return fmt.Errorf("grants of user %d: %w", uid, err)
		}
		return nil
	})
	if err != nil {
		return Account{}, err
	}
	return GetAccount(ctx, dir, db, uid)
}

// SetGroupGrants replaces the grants Waymark keeps for group uid and
// changes nothing else (beside TYPO3 the group must exist there; Waymark's
// row under its uid is made when missing, with TYPO3's title). Its members
// hold the grants at their next request. It refuses what SetUserGrants
// refuses, with ErrNoGroup for an unknown group.
func SetGroupGrants(ctx context.Context, dir Directory, db *store.DB, uid int64, gs []string) (Group, error) {
	if err := grants(gs); err != nil {
		return Group{}, err
	}
	g, err := GetGroup(ctx, dir, db, uid)
	if err != nil {
		return Group{}, err
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		if err := store.LockSettingsTx(ctx, tx); err != nil {
			return err
		}
		// Beside TYPO3 the row may be missing, and keeps TYPO3's title.
		if _, err := tx.Exec(ctx, `INSERT INTO be_groups (uid, title, grants) VALUES (?, ?, ?)
			ON CONFLICT (uid) DO UPDATE SET title = excluded.title, grants = excluded.grants`, uid, g.Title, jsonList(gs)); err != nil {
			return fmt.Errorf("grants of group %d: %w", uid, err)
		}
		return nil
	})
	if err != nil {
		return Group{}, err
	}
	return GetGroup(ctx, dir, db, uid)
}

// KeepUserTx makes sure Waymark's be_users has a row for user uid of a
// directory beside Waymark (which sessions, API tokens and grants name),
// with the username the directory has now; a row of another uid under the
// same username (a user renamed there) is renamed out of the way. The row
// holds no password and no rights: those are the directory's.
func KeepUserTx(ctx context.Context, tx *store.Tx, uid int64, username string) error {
	var have string
	err := tx.QueryRow(ctx, "SELECT username FROM be_users WHERE uid = ?", uid).Scan(&have)
	if err == nil && have == username {
		return nil
	}
	if _, err := tx.Exec(ctx, "UPDATE be_users SET username = ? WHERE username = ? AND uid <> ?",
		fmt.Sprintf("%s (name taken by typo3 uid %d)", username, uid), username, uid); err != nil {
		return fmt.Errorf("keep user %d: %w", uid, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO be_users (uid, username) VALUES (?, ?)
		ON CONFLICT (uid) DO UPDATE SET username = excluded.username`, uid, username); err != nil {
		return fmt.Errorf("keep user %d: %w", uid, err)
	}
	return nil
}

// ownGrants are the grants Waymark keeps on user uid's own row (none when
// it has no row: a user beside Waymark who never logged in).
func ownGrants(ctx context.Context, q store.Querier, uid int64) ([]string, error) {
	u, err := BuiltinDirectory{}.LoadUser(ctx, q, uid)
	switch {
	case errors.Is(err, ErrNoUser):
		return []string{}, nil
	case err != nil:
		return nil, err
	}
	return nonNil(u.Grants), nil
}

// rosterGroups are the roster's groups with the grants Waymark keeps for
// them (its own be_groups rows under the same uids).
func rosterGroups(ctx context.Context, q store.Querier, r Roster) ([]Group, error) {
	there, err := r.RosterGroups(ctx)
	if err != nil {
		return nil, err
	}
	own, err := LoadGroups(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]Group, 0, len(there))
	for _, g := range there {
		g.Grants = slices.Clone(own[g.UID].Grants)
		out = append(out, groupView(g))
	}
	return out, nil
}
