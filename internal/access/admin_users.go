package access

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"waymark/internal/auth"
	"waymark/internal/content"
	"waymark/internal/store"
)

// Account is a user as an administrator sees it: never the
// password or its hash, only whether one is set, and how many API tokens
// the user has.
type Account struct {
	UID             int64    `json:"uid"`
	Username        string   `json:"username"`
	Active          bool     `json:"active"`
	Admin           bool     `json:"admin"`
	ServiceAccount  bool     `json:"serviceAccount"`
	BackendLanguage string   `json:"backendLanguage"`
	Groups          []int64  `json:"groups"`
	Languages       []int64  `json:"languages"`
	Mounts          []int64  `json:"mounts"`
	Grants          []string `json:"grants"`
	HasPassword     bool     `json:"hasPassword"`
	Tokens          int      `json:"tokens"`
}

// AccountChange is what an administrator sets on a user. Every field
// replaces the stored one, except Password (nil keeps it; set-only, there is
// no way to read it) and Active (nil: true for a new user, unchanged for an
// existing one).
type AccountChange struct {
	UID      int64
	Username string
	Password *string
	// KeepSession is the session the change is made in ("" for a token or
	// the CLI): a new password ends every session of the user opened with
	// the old one except this one, when it is the user's own.
	KeepSession     string
	Active          *bool
	Admin           bool
	ServiceAccount  bool
	BackendLanguage string // "" = en
	Groups          []int64
	Languages       []int64
	Mounts          []int64
	Grants          []string
}

// ListAccounts reads every user, ordered by uid; beside TYPO3 every TYPO3
// user, whether or not Waymark has a row of it yet.
func ListAccounts(ctx context.Context, dir Directory, q store.Querier) ([]Account, error) {
	uids, err := accountUIDs(ctx, dir, q)
	if err != nil {
		return nil, err
	}
	out := make([]Account, 0, len(uids))
	for _, uid := range uids {
		a, err := GetAccount(ctx, dir, q, uid)
		if errors.Is(err, ErrNoUser) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// accountUIDs are the uids ListAccounts lists.
func accountUIDs(ctx context.Context, dir Directory, q store.Querier) ([]int64, error) {
	if r := rosterOf(dir); r != nil {
		return r.UserUIDs(ctx)
	}
	rows, err := q.Query(ctx, "SELECT uid FROM be_users ORDER BY uid")
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	var uids []int64
	for rows.Next() {
		var uid int64
		if err := rows.Scan(&uid); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list users: %w", err)
		}
		uids = append(uids, uid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return uids, nil
}

// GetAccount reads one user; ErrNoUser when none has the uid. Beside TYPO3
// the account is TYPO3's, with the grants Waymark keeps on the user's own
// row (not its groups') and no password (TYPO3 checks it).
func GetAccount(ctx context.Context, dir Directory, q store.Querier, uid int64) (Account, error) {
	u, err := OrBuiltin(dir).LoadUser(ctx, q, uid)
	if err != nil {
		return Account{}, err
	}
	a := Account{UID: u.UID, Username: u.Username, Active: !u.Disabled, Admin: u.Admin, ServiceAccount: u.ServiceAccount,
		BackendLanguage: u.BackendLanguage, Groups: nonNil(u.Groups), Languages: nonNil(u.Languages),
		Mounts: nonNil(u.Mounts), Grants: nonNil(u.Grants)}
	if External(dir) {
		if a.Grants, err = ownGrants(ctx, q, uid); err != nil {
			return Account{}, err
		}
		a.Tokens, err = auth.CountTokens(ctx, q, uid)
		return a, err
	}
	hash, err := PasswordHash(ctx, q, uid)
	if err != nil {
		return Account{}, err
	}
	a.HasPassword = hash != ""
	if a.Tokens, err = auth.CountTokens(ctx, q, uid); err != nil {
		return Account{}, err
	}
	return a, nil
}

// CreateAccount stores a new user (a zero UID takes the next free one),
// hashing a password at bcrypt work factor hashCost (0: auth.DefaultCost). It
// refuses bad input with a *FieldError and a taken username with
// ErrUsernameTaken, writing nothing.
func CreateAccount(ctx context.Context, src content.Source, dir Directory, db *store.DB, ch AccountChange, hashCost int) (Account, error) {
	if External(dir) {
		return Account{}, ErrManagedElsewhere
	}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := store.LockSettingsTx(ctx, tx); err != nil {
			return err
		}
		if ch.UID == 0 {
			if err := tx.QueryRow(ctx, "SELECT COALESCE(MAX(uid), 0) + 1 FROM be_users").Scan(&ch.UID); err != nil {
				return fmt.Errorf("next user uid: %w", err)
			}
		} else if _, err := OrBuiltin(dir).LoadUser(ctx, tx, ch.UID); err == nil {
			return fmt.Errorf("uid: user %d: %w", ch.UID, ErrExists)
		} else if !errors.Is(err, ErrNoUser) {
			return err
		}
		return writeAccount(ctx, src, dir, tx, ch, "", true, hashCost)
	})
	if err != nil {
		return Account{}, err
	}
	return GetAccount(ctx, dir, db, ch.UID)
}

// UpdateAccount replaces the user ch.UID as AccountChange says. Disabling a
// user ends their sessions in the same transaction; their tokens are
// refused while they are disabled (the authenticator loads the user on
// every request). It returns ErrNoUser for an unknown uid, ErrLastAdmin
// when no active administrator would remain, and refuses what
// CreateAccount refuses, writing nothing. A new password is hashed at
// hashCost (0: auth.DefaultCost).
func UpdateAccount(ctx context.Context, src content.Source, dir Directory, db *store.DB, ch AccountChange, hashCost int) (Account, error) {
	if External(dir) {
		return Account{}, ErrManagedElsewhere
	}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := store.LockSettingsTx(ctx, tx); err != nil {
			return err
		}
		old, err := OrBuiltin(dir).LoadUser(ctx, tx, ch.UID)
		if err != nil {
			return err
		}
		hash, err := PasswordHash(ctx, tx, ch.UID)
		if err != nil {
			return err
		}
		return writeAccount(ctx, src, dir, tx, ch, hash, !old.Disabled, hashCost)
	})
	if err != nil {
		return Account{}, err
	}
	return GetAccount(ctx, dir, db, ch.UID)
}

// SetActive enables or disables user uid and keeps every other field: the
// "disable a user" of the administration (the web screen, the CLI's user
// disable|enable). The user is read and written in one transaction under the
// settings lock, so a concurrent edit is not lost. Disabling ends the user's
// sessions in that transaction; it returns ErrNoUser and ErrLastAdmin like
// UpdateAccount, writing nothing.
func SetActive(ctx context.Context, src content.Source, dir Directory, db *store.DB, uid int64, active bool) (Account, error) {
	if External(dir) {
		return Account{}, ErrManagedElsewhere
	}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := store.LockSettingsTx(ctx, tx); err != nil {
			return err
		}
		u, err := OrBuiltin(dir).LoadUser(ctx, tx, uid)
		if err != nil {
			return err
		}
		hash, err := PasswordHash(ctx, tx, uid)
		if err != nil {
			return err
		}
		ch := AccountChange{UID: u.UID, Username: u.Username, Active: &active, Admin: u.Admin,
			ServiceAccount: u.ServiceAccount, BackendLanguage: u.BackendLanguage, Groups: u.Groups,
			Languages: u.Languages, Mounts: u.Mounts, Grants: u.Grants}
		return writeAccount(ctx, src, dir, tx, ch, hash, !u.Disabled, 0) // ch sets no password
	})
	if err != nil {
		return Account{}, err
	}
	return GetAccount(ctx, dir, db, uid)
}

// writeAccount validates ch and writes it; hash is the stored password hash
// kept when ch sets none, active the state kept when ch sets none, hashCost
// the work factor of a password ch sets.
func writeAccount(ctx context.Context, src content.Source, dir Directory, tx *store.Tx, ch AccountChange, hash string, active bool, hashCost int) error {
	if err := checkAccount(ctx, src, dir, tx, ch); err != nil {
		return err
	}
	if ch.Password != nil {
		h, err := auth.HashPassword(*ch.Password, hashCost)
		if err != nil {
			return invalid("password", "%s", err.Error())
		}
		hash = h
		// Sessions opened with the old password end with it, in this
		// transaction — except the one that set the new one, if it is the user's.
		if err := auth.EndSessionsExceptTx(ctx, tx, ch.UID, ch.KeepSession); err != nil {
			return err
		}
	}
	if ch.Active != nil {
		active = *ch.Active
	}
	u := User{UID: ch.UID, Username: ch.Username, Admin: ch.Admin, Disabled: !active, ServiceAccount: ch.ServiceAccount,
		BackendLanguage: cmp.Or(ch.BackendLanguage, "en"), Groups: ch.Groups, Languages: ch.Languages,
		Mounts: ch.Mounts, Grants: ch.Grants}
	if err := PutUserTx(ctx, tx, u, hash); err != nil {
		return err
	}
	if !active {
		if err := auth.EndSessionsTx(ctx, tx, ch.UID); err != nil {
			return err
		}
	}
	var admins int
	if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM be_users WHERE admin = ? AND disabled = ?", true, false).Scan(&admins); err != nil {
		return fmt.Errorf("count administrators: %w", err)
	}
	if admins == 0 {
		return fmt.Errorf("user %d: %w", ch.UID, ErrLastAdmin)
	}
	return nil
}

// checkAccount validates every field of ch and reports every field that is
// wrong at once (errors.Join of FieldErrors, in form order), so a form shows
// all its errors in one answer (FieldErrors); errors.As finds the first. A database error
// ends the check at once.
func checkAccount(ctx context.Context, src content.Source, dir Directory, q store.Querier, ch AccountChange) error {
	var bad []error
	name := ch.Username
	switch {
	case strings.TrimSpace(name) == "":
		bad = append(bad, invalid("username", "must not be empty"))
	case name != strings.TrimSpace(name):
		bad = append(bad, invalid("username", "must not start or end with spaces"))
	case len(name) > 100:
		bad = append(bad, invalid("username", "at most 100 bytes, got %d", len(name)))
	}
	if ch.Password != nil && (len(*ch.Password) < 8 || len(*ch.Password) > 72) {
		bad = append(bad, invalid("password", "want 8 to 72 bytes, got %d", len(*ch.Password)))
	}
	if l := ch.BackendLanguage; l != "" && l != "en" && l != "de" {
		bad = append(bad, invalid("backendLanguage", "want en or de, got %q", l))
	}
	c := refChecker{ctx, content.OrBuiltin(src), OrBuiltin(dir), q}
	for _, check := range []func() error{
		func() error { return c.groups("groups", ch.Groups) },
		func() error { return c.languages(ch.Languages) },
		func() error { return c.mounts(ch.Mounts) },
		func() error { return grants(ch.Grants) },
	} {
		err := check()
		var fe *FieldError
		switch {
		case errors.As(err, &fe):
			bad = append(bad, err)
		case err != nil:
			return err
		}
	}
	if len(bad) > 0 {
		return FieldErrors(bad)
	}
	other, err := OrBuiltin(dir).LoadUserByName(ctx, q, name)
	switch {
	case err == nil && other.UID != ch.UID:
		return fmt.Errorf("username %q: %w", name, ErrUsernameTaken)
	case err != nil && !errors.Is(err, ErrNoUser):
		return err
	}
	return nil
}

func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// CheckAccount validates ch as UpdateAccount and CreateAccount would and
// writes nothing: a form that already found errors of its own lists the
// store's in the same answer. Every wrong field is reported (FieldErrors).
func CheckAccount(ctx context.Context, src content.Source, dir Directory, q store.Querier, ch AccountChange) error {
	return checkAccount(ctx, src, dir, q, ch)
}
