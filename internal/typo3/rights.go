package typo3

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// AuthModeFields are the select fields Waymark reads whose TCA has
// 'authMode' => 'explicitAllow' in TYPO3 13.4: tt_content.CType
// (EXT:frontend, Configuration/TCA/tt_content.php). DataHandler refuses to
// change a record whose value of such a field is not in the user's groups'
// explicit_allowdeny (BackendUserAuthentication::recordEditAccessInternals
// and checkAuthMode). tt_content.list_type has the same authMode; Waymark
// does not read list_type (a plugin element needs its CType "list" allowed
// all the same).
var AuthModeFields = map[string][]string{"tt_content": {"CType"}}

// CheckAuthMode is TYPO3 13.4's BackendUserAuthentication::checkAuthMode:
// administrators, an empty value and "--div--" pass; a value with ":", "|"
// or "," never does; else "table:field:value" must be one of the groups'
// explicit_allowdeny entries. An entry of TYPO3 before 12 with a fourth part
// ("tt_content:CType:text:ALLOW", left when the upgrade wizard
// BackendGroupsExplicitAllowDenyMigration did not run) matches nothing, as
// in TYPO3 13.4.
func (u *User) CheckAuthMode(table, field, value string) bool {
	if u.Admin || value == "" || value == "--div--" {
		return true
	}
	if strings.ContainsAny(value, ":|,") {
		return false
	}
	return slices.Contains(u.ExplicitAllow, table+":"+field+":"+value)
}

// ErrMFARequired is returned by Login for a user who signs in to TYPO3 with
// an active second factor (be_users.mfa), after the password was found
// right: Waymark's password login cannot ask for the second factor, so such
// a user opens Waymark from the TYPO3 backend.
var ErrMFARequired = errors.New("this account signs in to TYPO3 with a second factor: open Waymark from the TYPO3 backend (module \"Waymark\")")

// mfaActive tells whether be_users.mfa names an active provider, as TYPO3's
// MfaProviderRegistry::hasActiveProviders: a provider whose "active" property
// is true (TOTP only with a secret); recovery codes alone are no second
// factor (RecoveryCodesProvider is active only beside another provider). A
// provider of an extension counts when its "active" is true. A value that
// is not JSON is no provider, as TYPO3's json_decode(…) ?? [] reads it.
func mfaActive(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	var providers map[string]map[string]any
	if err := json.Unmarshal(raw, &providers); err != nil {
		return false
	}
	for name, props := range providers {
		if name == "recovery-codes" || !truthy(props["active"]) {
			continue
		}
		if name == "totp" {
			if s, _ := props["secret"].(string); s == "" {
				continue
			}
		}
		return true
	}
	return false
}

// truthy is PHP's (bool) cast of a decoded JSON value.
func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case float64:
		return v != 0
	case string:
		return v != "" && v != "0"
	case nil:
		return false
	default:
		return true
	}
}

// NoWorkspace is the workspace id TYPO3 gives a user who may use no
// workspace at all (getDefaultWorkspace's fallback).
const NoWorkspace = -99

// Workspace is where TYPO3 puts a backend user's changes: ID 0 is live,
// another a sys_workspace uid (Title its title), NoWorkspace none.
type Workspace struct {
	ID    int64
	Title string
}

// WorkspacesInstalled tells whether the installation has EXT:workspaces
// (its table sys_workspace exists). It is read at every call.
func (dir *Directory) WorkspacesInstalled(ctx context.Context) (bool, error) {
	q := "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'sys_workspace'"
	if dir.d == Postgres {
		q = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ANY (current_schemas(false)) AND table_name = 'sys_workspace'"
	}
	var n int
	if err := dir.db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return false, fmt.Errorf("look for sys_workspace: %w", err)
	}
	return n > 0, nil
}

// LiveAccess tells whether TYPO3 lets u change the live workspace: always
// without EXT:workspaces; with it, administrators and users whose own or
// groups' workspace_perms have bit 1 (hasEditAccessToLiveWorkspace).
func (dir *Directory) LiveAccess(ctx context.Context, u *User) (bool, error) {
	if u.Admin || u.LiveWorkspace {
		return true, nil
	}
	installed, err := dir.WorkspacesInstalled(ctx)
	return !installed, err
}

// Workspace is the workspace TYPO3 puts u in at her next backend request,
// as BackendUserAuthentication::setWorkspace decides it: the one in
// be_users.workspace_id when she may use it, else live when she may, else
// the first workspace by title she is an owner or member of (directly or
// through a group), else NoWorkspace. Without EXT:workspaces it is live.
func (dir *Directory) Workspace(ctx context.Context, u *User) (Workspace, error) {
	installed, err := dir.WorkspacesInstalled(ctx)
	if err != nil || !installed {
		return Workspace{}, err
	}
	rows, err := dir.db.QueryContext(ctx, dir.d.rebind("SELECT `uid`, `title`, COALESCE(`adminusers`, ''), COALESCE(`members`, '') "+
		"FROM `sys_workspace` WHERE `deleted` = 0 AND `pid` = 0 ORDER BY `title`"))
	if err != nil {
		return Workspace{}, fmt.Errorf("read sys_workspace: %w", err)
	}
	defer rows.Close()
	var usable []Workspace
	for rows.Next() {
		var w Workspace
		var owners, members string
		if err := rows.Scan(&w.ID, &w.Title, &owners, &members); err != nil {
			return Workspace{}, fmt.Errorf("read sys_workspace: %w", err)
		}
		if u.Admin || u.inWorkspaceList(owners) || u.inWorkspaceList(members) {
			usable = append(usable, w)
		}
	}
	if err := rows.Err(); err != nil {
		return Workspace{}, fmt.Errorf("read sys_workspace: %w", err)
	}
	live := u.Admin || u.LiveWorkspace
	if u.WorkspaceID == 0 && live {
		return Workspace{}, nil
	}
	for _, w := range usable {
		if w.ID == u.WorkspaceID {
			return w, nil
		}
	}
	if live {
		return Workspace{}, nil
	}
	if len(usable) > 0 {
		return usable[0], nil
	}
	return Workspace{ID: NoWorkspace}, nil
}

// inWorkspaceList tells whether sys_workspace.adminusers or members (a list
// of "be_users_<uid>" and "be_groups_<uid>") names u or one of her groups.
func (u *User) inWorkspaceList(s string) bool {
	for _, e := range list(s) {
		if e == fmt.Sprintf("be_users_%d", u.UID) {
			return true
		}
		for _, g := range u.Groups {
			if e == fmt.Sprintf("be_groups_%d", g) {
				return true
			}
		}
	}
	return false
}

// dummyHash is a stored password hash of the installation that Login
// verifies a refused login against when there is no hash of the user's own
// to verify (unknown, deleted, disabled or expired users, users without a
// password or with a hash Waymark cannot verify): every refused login costs
// one verification of the kind and cost the installation uses, so its time
// does not tell such accounts apart. The result is thrown away. Without any
// verifiable hash in be_users nobody can log in, and a fixed Argon2i hash of
// TYPO3's own cost is used.
func (dir *Directory) dummyHash(ctx context.Context) string {
	var hash string
	err := dir.db.QueryRowContext(ctx, dir.d.rebind("SELECT `password` FROM `be_users` WHERE `deleted` = 0 AND "+
		"(`password` LIKE '$argon2i$%' OR `password` LIKE '$argon2id$%' OR `password` LIKE '$2y$%') ORDER BY `uid` LIMIT 1")).Scan(&hash)
	if k := ClassifyHash(hash); err == nil && (k == HashArgon2i || k == HashArgon2id || k == HashBcrypt) {
		return hash
	}
	return fallbackDummy
}

// fallbackDummy is an Argon2i hash of a random password nobody knows, at
// TYPO3 13's default cost (TYPO3Argon2).
const fallbackDummy = "$argon2i$v=19$m=65536,t=16,p=1$Ms6KWBaGamR3Oh3YjiavBQ$lMetIlVJ+Cz7FGrnONyu1KZJ8vPQ14WAAD2TEwm5z0U"
