package typo3

import (
	"context"
	"fmt"
)

// GroupInfo is a backend group as an administrator sees it in a list.
type GroupInfo struct {
	UID       int64
	Title     string
	Hidden    bool // grants nothing while hidden
	Subgroups []int64
}

// UserInfo is a backend user as an administrator sees it in a list, with
// whether the user may work now and can log in to Waymark.
type UserInfo struct {
	UID      int64
	Username string
	RealName string
	Admin    bool
	Active   bool     // not disabled, inside start and end time
	HashKind HashKind // of the stored password
	MFA      bool     // signs in to TYPO3 with an active second factor
}

// cliUser is TYPO3's command-line user (CommandLineUserAuthentication): an
// administrator with a random password TYPO3 made, no person; Waymark's
// password login refuses it.
const cliUser = "_cli_"

// CanLogIn tells whether the user can log in to Waymark with a password:
// active, not TYPO3's command-line user, without a second factor (such a
// user opens Waymark from the TYPO3 backend), with a hash Waymark checks.
func (u UserInfo) CanLogIn() bool {
	return u.Active && !u.MFA && u.Username != cliUser &&
		(u.HashKind == HashArgon2i || u.HashKind == HashArgon2id || u.HashKind == HashBcrypt)
}

// Groups lists the backend groups that are not deleted, by uid — the groups
// Waymark's own grants and configurations may name.
func (dir *Directory) Groups(ctx context.Context) ([]GroupInfo, error) {
	rs, err := dir.db.QueryContext(ctx, dir.d.rebind("SELECT `uid`, `title`, `hidden`, COALESCE(`subgroup`, '') "+
		"FROM `be_groups` WHERE `deleted` = 0 ORDER BY `uid`"))
	if err != nil {
		return nil, fmt.Errorf("list backend groups: %w", err)
	}
	defer rs.Close()
	var out []GroupInfo
	for rs.Next() {
		var g GroupInfo
		var hidden int64
		var sub string
		if err := rs.Scan(&g.UID, &g.Title, &hidden, &sub); err != nil {
			return nil, fmt.Errorf("list backend groups: %w", err)
		}
		g.Hidden, g.Subgroups = hidden != 0, ids(sub)
		out = append(out, g)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list backend groups: %w", err)
	}
	return out, nil
}

// Users lists the backend users that are not deleted, by uid.
func (dir *Directory) Users(ctx context.Context) ([]UserInfo, error) {
	rs, err := dir.db.QueryContext(ctx, dir.d.rebind("SELECT `uid`, `username`, `realName`, `admin`, `disable`, `starttime`, `endtime`, `password`, `mfa` "+
		"FROM `be_users` WHERE `deleted` = 0 ORDER BY `uid`"))
	if err != nil {
		return nil, fmt.Errorf("list backend users: %w", err)
	}
	defer rs.Close()
	now := dir.now().Unix()
	var out []UserInfo
	for rs.Next() {
		var u UserInfo
		var admin, disable, start, end int64
		var hash string
		var mfa []byte
		if err := rs.Scan(&u.UID, &u.Username, &u.RealName, &admin, &disable, &start, &end, &hash, &mfa); err != nil {
			return nil, fmt.Errorf("list backend users: %w", err)
		}
		u.Admin = admin&1 == 1
		u.Active = disable == 0 && start <= now && (end == 0 || end > now)
		u.HashKind = ClassifyHash(hash)
		u.MFA = mfaActive(mfa)
		out = append(out, u)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list backend users: %w", err)
	}
	return out, nil
}
