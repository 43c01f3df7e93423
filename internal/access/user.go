package access

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"waymark/internal/content"
	"waymark/internal/fault"
	"waymark/internal/store"
)

// Grants a group or user can hold.
const (
	GrantApprove      = "approve"       // may release runs on four-eyes configurations
	GrantSkillApprove = "skill_approve" // may approve and revoke skill versions
)

// User is a backend user as stored.
type User struct {
	UID             int64    `json:"uid"`
	Username        string   `json:"username"`
	Admin           bool     `json:"admin"`
	Disabled        bool     `json:"disabled"`
	ServiceAccount  bool     `json:"serviceAccount"`
	BackendLanguage string   `json:"backendLanguage"`
	Groups          []int64  `json:"groups"`
	Languages       []int64  `json:"languages"`
	Mounts          []int64  `json:"mounts"`
	Grants          []string `json:"grants"`
	// PasswordMark marks the password a directory beside Waymark holds for
	// the user now (TYPO3's hash, digested): sessions and tokens made under
	// another one are refused. Empty for Waymark's own users.
	PasswordMark string `json:"-"`
}

// Group is a backend group as stored.
type Group struct {
	UID              int64    `json:"uid"`
	Title            string   `json:"title"`
	TablesSelect     []string `json:"tablesSelect"`
	TablesModify     []string `json:"tablesModify"`
	NonExcludeFields []string `json:"nonExcludeFields"`
	Languages        []int64  `json:"languages"`
	Mounts           []int64  `json:"mounts"`
	Subgroups        []int64  `json:"subgroups"`
	Grants           []string `json:"grants"`
}

// Actor is a user with the permissions of all its groups and their subgroups
// resolved. It is a read of the store at one moment: load it again for the next decision.
type Actor struct {
	User
	AllGroups []int64 // the user's groups and all their subgroups, sorted

	tablesSelect map[string]bool
	tablesModify map[string]bool
	nonExclude   map[string]bool // "table:field"
	languages    map[int64]bool  // empty = every language
	mounts       []int64
	grants       map[string]bool
	// authMode and explicitAllow: see Rights.AuthMode; nil authMode means
	// the directory has no such rule.
	authMode      map[string][]string
	explicitAllow map[string]bool
}

// ErrNoUser is returned when the user does not exist.
var ErrNoUser = fault.New(fault.NotFound, "not_found", "no such user")

// LoadUser reads one user.
func (BuiltinDirectory) LoadUser(ctx context.Context, q store.Querier, uid int64) (User, error) {
	return scanUser(q.QueryRow(ctx, "SELECT "+userColumns+" FROM be_users WHERE uid = ?", uid))
}

// LoadUserByName reads one user by username.
func (BuiltinDirectory) LoadUserByName(ctx context.Context, q store.Querier, username string) (User, error) {
	return scanUser(q.QueryRow(ctx, "SELECT "+userColumns+" FROM be_users WHERE username = ?", username))
}

const userColumns = "uid, username, admin, disabled, service_account, backend_language, group_uids, languages, mounts, grants"

func scanUser(row *sql.Row, extra ...any) (User, error) {
	var u User
	var groups, langs, mounts, grants string
	dest := append([]any{&u.UID, &u.Username, &u.Admin, &u.Disabled, &u.ServiceAccount, &u.BackendLanguage, &groups, &langs, &mounts, &grants}, extra...)
	err := row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, ErrNoUser
	}
	if err != nil {
		return User{}, fmt.Errorf("read user: %w", err)
	}
	if err := decodeLists(map[string]any{"groups": &u.Groups, "languages": &u.Languages, "mounts": &u.Mounts, "grants": &u.Grants},
		map[string]string{"groups": groups, "languages": langs, "mounts": mounts, "grants": grants}); err != nil {
		return User{}, fmt.Errorf("user %d: %w", u.UID, err)
	}
	return u, nil
}

func decodeLists(dst map[string]any, src map[string]string) error {
	for k, p := range dst {
		if err := json.Unmarshal([]byte(src[k]), p); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// LoadGroups reads all groups, keyed by uid.
func LoadGroups(ctx context.Context, q store.Querier) (map[int64]Group, error) {
	rows, err := q.Query(ctx, `SELECT uid, title, tables_select, tables_modify, non_exclude_fields, languages, mounts, subgroups, grants FROM be_groups`)
	if err != nil {
		return nil, fmt.Errorf("read groups: %w", err)
	}
	defer rows.Close()
	out := map[int64]Group{}
	for rows.Next() {
		var g Group
		var ts, tm, nef, langs, mounts, subs, grants string
		if err := rows.Scan(&g.UID, &g.Title, &ts, &tm, &nef, &langs, &mounts, &subs, &grants); err != nil {
			return nil, err
		}
		if err := decodeLists(map[string]any{"ts": &g.TablesSelect, "tm": &g.TablesModify, "nef": &g.NonExcludeFields,
			"langs": &g.Languages, "mounts": &g.Mounts, "subs": &g.Subgroups, "grants": &g.Grants},
			map[string]string{"ts": ts, "tm": tm, "nef": nef, "langs": langs, "mounts": mounts, "subs": subs, "grants": grants}); err != nil {
			return nil, fmt.Errorf("group %d: %w", g.UID, err)
		}
		out[g.UID] = g
	}
	return out, rows.Err()
}

// LoadActor reads the user and its groups as stored now and resolves them.
// Resolved actors are kept per database for one settings generation, which
// every change of be_users and be_groups moves (store.GenCache): a changed
// user or group is seen at once.
func (BuiltinDirectory) LoadActor(ctx context.Context, q store.Querier, uid int64) (*Actor, error) {
	return actors.Get(ctx, q, uid, func(ctx context.Context, q store.Querier) (*Actor, error) {
		u, err := BuiltinDirectory{}.LoadUser(ctx, q, uid)
		if err != nil {
			return nil, err
		}
		var groups map[int64]Group
		if len(u.Groups) > 0 {
			if groups, err = groupCache.Get(ctx, q, struct{}{}, LoadGroups); err != nil {
				return nil, err
			}
		}
		return Resolve(u, groups), nil
	})
}

// actors and groupCache keep resolved actors and all groups (never modified
// once stored).
var (
	actors     = store.NewGenCache[int64, *Actor]("be_users", "be_groups")
	groupCache = store.NewGenCache[struct{}, map[int64]Group]("be_groups")
)

// Resolve combines a user with its groups and their subgroups (cycles are harmless).
func Resolve(u User, groups map[int64]Group) *Actor {
	a := &Actor{
		User:         u,
		tablesSelect: map[string]bool{},
		tablesModify: map[string]bool{},
		nonExclude:   map[string]bool{},
		languages:    map[int64]bool{},
		grants:       map[string]bool{},
	}
	for _, g := range u.Grants {
		a.grants[g] = true
	}
	for _, l := range u.Languages {
		a.languages[l] = true
	}
	a.mounts = append(a.mounts, u.Mounts...)
	seen := map[int64]bool{}
	queue := append([]int64(nil), u.Groups...)
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		g, ok := groups[id]
		if seen[id] || !ok {
			continue
		}
		seen[id] = true
		a.AllGroups = append(a.AllGroups, id)
		for _, t := range g.TablesSelect {
			a.tablesSelect[t] = true
		}
		for _, t := range g.TablesModify {
			a.tablesModify[t] = true
		}
		for _, f := range g.NonExcludeFields {
			a.nonExclude[f] = true
		}
		for _, l := range g.Languages {
			a.languages[l] = true
		}
		for _, gr := range g.Grants {
			a.grants[gr] = true
		}
		a.mounts = append(a.mounts, g.Mounts...)
		queue = append(queue, g.Subgroups...)
	}
	sort.Slice(a.AllGroups, func(i, j int) bool { return a.AllGroups[i] < a.AllGroups[j] })
	slices.Sort(a.mounts)
	a.mounts = slices.Compact(a.mounts)
	return a
}

// Active reports whether the actor may do anything at all.
func (a *Actor) Active() bool { return a != nil && !a.Disabled }

// IsAdmin reports an active administrator.
func (a *Actor) IsAdmin() bool { return a.Active() && a.Admin }

// HasGrant reports a grant held by the user or one of its groups (admins hold all).
func (a *Actor) HasGrant(g string) bool { return a.IsAdmin() || (a.Active() && a.grants[g]) }

// MayReviewSkills reports an administrator or a holder of the skill_approve
// grant: who sees every skill and approves or revokes its digests (the JSON
// API's /api/skills… and the web UI's skills screens).
func (a *Actor) MayReviewSkills() bool { return a.HasGrant(GrantSkillApprove) }

// InGroup reports membership, subgroups included.
func (a *Actor) InGroup(uid int64) bool { return a.Active() && slices.Contains(a.AllGroups, uid) }

// EffectiveLanguages lists the languages the actor may edit; nil means every language.
func (a *Actor) EffectiveLanguages() []int64 {
	if a.IsAdmin() || len(a.languages) == 0 {
		return nil
	}
	out := make([]int64, 0, len(a.languages))
	for l := range a.languages {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// EffectiveMounts lists the DB mounts of the user and its groups.
func (a *Actor) EffectiveMounts() []int64 { return append([]int64(nil), a.mounts...) }

// EffectiveGrants lists the grants, sorted.
func (a *Actor) EffectiveGrants() []string {
	out := make([]string, 0, len(a.grants))
	for g := range a.grants {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// CanReadTable: administrators, or a group lists the table for select or modify.
func (a *Actor) CanReadTable(table string) bool {
	return a.IsAdmin() || (a.Active() && (a.tablesSelect[table] || a.tablesModify[table]))
}

// CanModifyTable: administrators, or a group lists the table for modify.
func (a *Actor) CanModifyTable(table string) bool {
	return a.IsAdmin() || (a.Active() && a.tablesModify[table])
}

// MayEditField: administrators; a field that is not excluded; an excluded one with a "table:field" grant.
func (a *Actor) MayEditField(table string, field string, exclude bool) bool {
	if a.IsAdmin() {
		return true
	}
	if !a.Active() {
		return false
	}
	return !exclude || a.nonExclude[table+":"+field]
}

// MayEditLanguage: administrators; every language when no group restricts them;
// all-languages (-1) records are editable by every active user as in TYPO3.
func (a *Actor) MayEditLanguage(lang int64) bool {
	if a.IsAdmin() {
		return true
	}
	if !a.Active() {
		return false
	}
	return lang == -1 || len(a.languages) == 0 || a.languages[lang]
}

// MayEditRecordType reports whether the actor may change rec at all by the
// value of its type field, as TYPO3's checkAuthMode for fields with TCA
// authMode explicitAllow (tt_content.CType): administrators; a directory
// without the rule; an empty value or "--div--"; else "table:field:value"
// must be allowed explicitly — a group list without it (or an empty one)
// allows none. A value with ":", "|" or "," is never allowed. field names the
// field that refused.
func (a *Actor) MayEditRecordType(rec content.Record) (field string, ok bool) {
	if a.IsAdmin() {
		return "", true
	}
	if !a.Active() {
		return "", false
	}
	for _, f := range a.authMode[rec.Table] {
		v := rec.Fields[f]
		if v == "" || v == "--div--" {
			continue
		}
		if strings.ContainsAny(v, ":|,") || !a.explicitAllow[rec.Table+":"+f+":"+v] {
			return f, false
		}
	}
	return "", true
}
