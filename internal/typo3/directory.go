package typo3

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Permission is a set of the page permission bits of pages.perms_user,
// perms_group and perms_everybody.
type Permission int

// The bits of TYPO3's page permissions.
const (
	PageShow    Permission = 1  // see the page and its content
	PageEdit    Permission = 2  // change the page record
	PageDelete  Permission = 4  // delete the page
	PageNew     Permission = 8  // create pages below it
	ContentEdit Permission = 16 // change its content elements
	AllPerms               = PageShow | PageEdit | PageDelete | PageNew | ContentEdit
)

// Has tells whether every bit of want is set.
func (p Permission) Has(want Permission) bool { return p&want == want }

// mountsFromGroups is the bit of be_users.options that adds the groups'
// db_mountpoints to the user's own.
const mountsFromGroups = 1

// maxDepth bounds a rootline walk, so a pid cycle in a damaged page tree
// ends instead of looping.
const maxDepth = 100

// ErrUnknownUser is returned for a username or uid that has no backend user,
// or a deleted one (TYPO3 treats both alike).
var ErrUnknownUser = errors.New("unknown backend user")

// ErrWrongPassword is returned by Login for a password that does not match,
// and for a user without a password.
var ErrWrongPassword = errors.New("wrong password")

// InactiveReason says why an existing backend user may not work now.
type InactiveReason string

// The reasons, as TYPO3's enable columns of be_users decide them.
const (
	Disabled     InactiveReason = "disabled"
	NotYetActive InactiveReason = "not active before its start time"
	Expired      InactiveReason = "expired at its end time"
)

// InactiveError is returned for a backend user who exists but is disabled,
// before its start time or after its end time.
type InactiveError struct {
	Username string
	Reason   InactiveReason
}

func (e *InactiveError) Error() string {
	return fmt.Sprintf("backend user %q is %s", e.Username, e.Reason)
}

// User is a backend user with the rights TYPO3 gives them, resolved from
// be_users and their active groups at the time of the read.
type User struct {
	UID      int64
	Username string
	RealName string
	Admin    bool
	Lang     string // backend language: "default" is English

	// Groups are the uids of the user's groups and their subgroups, hidden
	// and deleted groups (and what only they would bring in) left out.
	Groups           []int64
	TablesSelect     []string // includes TablesModify, as in TYPO3
	TablesModify     []string
	NonExcludeFields []string // "table:column"
	// ExplicitAllow are the groups' explicit_allowdeny entries
	// ("tt_content:CType:text"): the values of an authMode field (see
	// AuthModeFields) the user may edit records of.
	ExplicitAllow []string
	// AllowedLanguages are the user's own allowed_languages and the
	// groups', as fetchGroupData gathers them; empty: every language.
	AllowedLanguages []int64
	// LiveWorkspace is bit 1 of workspace_perms of the user or one of the
	// groups: TYPO3 lets the user edit the live workspace. It only counts
	// with EXT:workspaces installed (see Directory.Workspace).
	LiveWorkspace bool
	// WorkspaceID is be_users.workspace_id as stored: the workspace the
	// user last chose (0 live, -99 none).
	WorkspaceID int64
	// MFA tells that the user signs in to TYPO3 with an active second
	// factor (be_users.mfa); Waymark's password login refuses such users.
	MFA bool
	// Mounts are the page uids of the user's db mounts (their own, plus the
	// groups' when be_users.options has bit 1) that exist and the user may
	// show, as TYPO3 keeps them.
	Mounts []int64

	hash string
}

// CanSelectTable tells whether the user may read records of table.
// PasswordMark is a digest of the user's password hash as TYPO3 stores it
// now (never the hash): it changes when her password changes ("" without one).
func (u *User) PasswordMark() string {
	if u.hash == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("waymark password mark\x00" + u.hash))
	return hex.EncodeToString(sum[:16])
}

func (u *User) CanSelectTable(table string) bool {
	return u.Admin || slices.Contains(u.TablesSelect, table)
}

// CanModifyTable tells whether the user may change records of table.
func (u *User) CanModifyTable(table string) bool {
	return u.Admin || slices.Contains(u.TablesModify, table)
}

// HasNonExcludeField tells whether the user may edit the column of table when
// TYPO3 marks it as an exclude field; other fields need no such right.
func (u *User) HasNonExcludeField(table, column string) bool {
	return u.Admin || slices.Contains(u.NonExcludeFields, table+":"+column)
}

// LanguageAllowed tells whether the user may edit records of the language,
// as TYPO3's checkLanguageAccess: admins and users without a language limit
// may edit every language, and -1 (all languages) is always allowed.
func (u *User) LanguageAllowed(id int64) bool {
	return u.Admin || len(u.AllowedLanguages) == 0 || id == -1 || slices.Contains(u.AllowedLanguages, id)
}

func (u *User) memberOf(group int64) bool {
	return group != 0 && slices.Contains(u.Groups, group)
}

// DirectoryConfig are the options of NewDirectory.
type DirectoryConfig struct {
	// Now decides start and end times; nil means time.Now.
	Now func() time.Time
}

// Directory reads backend users and their rights live from a TYPO3 database:
// every call reads the current rows, so a change made in TYPO3 counts at the
// next call.
type Directory struct {
	db  *sql.DB
	d   Dialect
	now func() time.Time
}

// NewDirectory returns a Directory over db, a TYPO3 database of dialect d.
func NewDirectory(db *sql.DB, d Dialect, cfg *DirectoryConfig) (*Directory, error) {
	if db == nil {
		return nil, errors.New("typo3 directory: the database is nil")
	}
	if d != MariaDB && d != Postgres {
		return nil, fmt.Errorf("typo3 directory: unknown dialect %q", d)
	}
	if cfg == nil {
		cfg = &DirectoryConfig{}
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Directory{db: db, d: d, now: now}, nil
}

// rebind turns a query written with ? and backticks into d's form.
func (d Dialect) rebind(q string) string {
	if d == MariaDB {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		switch r {
		case '?':
			n++
			b.WriteString(d.placeholder(n))
		case '`':
			b.WriteByte('"')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

const userColumns = "`uid`, `username`, `realName`, `admin`, `disable`, `starttime`, `endtime`, `lang`, " +
	"COALESCE(`usergroup`, ''), COALESCE(`db_mountpoints`, ''), `options`, `password`, COALESCE(`allowed_languages`, ''), " +
	"`workspace_perms`, `workspace_id`, `mfa`"

// User loads the backend user by username with their rights.
func (dir *Directory) User(ctx context.Context, username string) (*User, error) {
	return dir.load(ctx, "`username` = ?", username)
}

// UserByUID loads the backend user by uid with their rights.
func (dir *Directory) UserByUID(ctx context.Context, uid int64) (*User, error) {
	return dir.load(ctx, "`uid` = ?", uid)
}

// Login loads the user and checks the password against the stored hash.
// An unknown, deleted, disabled or expired user answers ErrWrongPassword,
// like a wrong password, so a login never tells whether an account exists;
// User tells the cases apart for the checks at each request. Every refused
// login costs one password verification of the kind and cost the
// installation uses (dummyHash where the user has no hash of her own to
// verify), so its time does not tell these cases apart either. A hash of a
// kind Waymark cannot verify is an error wrapping ErrUnsupportedHash that
// names the kind (for the operator's log). A user with an active second
// factor is refused with ErrMFARequired — only when the password is right,
// so the answer tells nothing to whom does not know it.
func (dir *Directory) Login(ctx context.Context, username, password string) (*User, error) {
	u, err := dir.User(ctx, username)
	var inactive *InactiveError
	if errors.Is(err, ErrUnknownUser) || errors.As(err, &inactive) {
		dir.spend(ctx, password)
		return nil, ErrWrongPassword
	}
	if err != nil {
		return nil, err
	}
	if u.hash == "" || u.Username == cliUser {
		dir.spend(ctx, password)
		return nil, ErrWrongPassword
	}
	ok, err := VerifyPassword(u.hash, password)
	if err != nil {
		dir.spend(ctx, password)
		return nil, fmt.Errorf("backend user %q: %w", username, err)
	}
	if !ok {
		return nil, ErrWrongPassword
	}
	if u.MFA {
		return nil, fmt.Errorf("backend user %q: %w", username, ErrMFARequired)
	}
	return u, nil
}

// spend verifies password against dummyHash and forgets the answer: the
// cost of a refused login that had no hash of its own to verify.
func (dir *Directory) spend(ctx context.Context, password string) {
	_, _ = VerifyPassword(dir.dummyHash(ctx), password)
}

func (dir *Directory) load(ctx context.Context, where string, arg any) (*User, error) {
	q := dir.d.rebind("SELECT " + userColumns + " FROM `be_users` WHERE " + where + " AND `deleted` = 0")
	var (
		u                       User
		admin, disable, options int64
		start, end              int64
		usergroup, mounts       string
		ownLangs                string
		wsPerms                 int64
		mfa                     []byte
	)
	err := dir.db.QueryRowContext(ctx, q, arg).Scan(&u.UID, &u.Username, &u.RealName, &admin, &disable,
		&start, &end, &u.Lang, &usergroup, &mounts, &options, &u.hash, &ownLangs, &wsPerms, &u.WorkspaceID, &mfa)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrUnknownUser
	}
	if err != nil {
		return nil, fmt.Errorf("read backend user: %w", err)
	}
	now := dir.now().Unix()
	switch {
	case disable != 0:
		return nil, &InactiveError{u.Username, Disabled}
	case start > now:
		return nil, &InactiveError{u.Username, NotYetActive}
	case end != 0 && end <= now:
		return nil, &InactiveError{u.Username, Expired}
	}
	u.Admin = admin&1 == 1
	u.MFA = mfaActive(mfa)
	groups, err := dir.groups(ctx, ids(usergroup))
	if err != nil {
		return nil, err
	}
	var tablesSelect, tablesModify, fields, allow []string
	// fetchGroupData starts from the user's own allowed_languages and
	// workspace_perms and adds the groups'.
	langs := signedIDs(ownLangs)
	mountList := ids(mounts)
	for _, g := range groups {
		u.Groups = append(u.Groups, g.uid)
		tablesSelect = append(tablesSelect, g.tablesSelect...)
		tablesModify = append(tablesModify, g.tablesModify...)
		fields = append(fields, g.nonExcludeFields...)
		langs = append(langs, g.languages...)
		allow = append(allow, g.explicitAllow...)
		wsPerms |= g.workspacePerms
		if options&mountsFromGroups != 0 {
			mountList = append(mountList, g.mounts...)
		}
	}
	u.TablesModify = unique(tablesModify)
	u.TablesSelect = unique(append(tablesSelect, tablesModify...))
	u.NonExcludeFields = unique(fields)
	u.AllowedLanguages = unique(langs)
	u.ExplicitAllow = unique(allow)
	u.LiveWorkspace = wsPerms&1 == 1
	if u.Admin {
		return &u, nil
	}
	mountList = unique(mountList)
	pages, err := dir.pagesIn(ctx, mountList)
	if err != nil {
		return nil, err
	}
	for _, m := range mountList {
		if p, ok := pages[m]; ok && u.ownPerms(p).Has(PageShow) {
			u.Mounts = append(u.Mounts, m)
		}
	}
	return &u, nil
}

type group struct {
	uid                                                         int64
	tablesSelect, tablesModify, nonExcludeFields, explicitAllow []string
	languages, mounts, subgroups                                []int64
	workspacePerms                                              int64
}

// groups resolves the group uids and, recursively, their subgroups, as
// TYPO3's group resolver: a hidden or deleted group counts as absent, with
// its subgroups; a group reached twice (a cycle) is taken once. Subgroups
// come before the group that names them. The groups are read one query per
// level of subgroups, not one per group.
func (dir *Directory) groups(ctx context.Context, uids []int64) ([]group, error) {
	read := map[int64]group{} // the live groups reached; absent ones are missing
	asked := map[int64]bool{}
	level := uids
	for depth := 0; len(level) > 0 && depth <= maxDepth; depth++ {
		var next []int64
		for _, uid := range level {
			if !asked[uid] {
				asked[uid] = true
				next = append(next, uid)
			}
		}
		found, err := dir.groupsIn(ctx, next)
		if err != nil {
			return nil, err
		}
		level = nil
		for _, g := range found {
			read[g.uid] = g
			level = append(level, g.subgroups...)
		}
	}
	var out []group
	seen := map[int64]bool{}
	var visit func(uids []int64, depth int)
	visit = func(uids []int64, depth int) {
		if depth > maxDepth {
			return
		}
		for _, uid := range uids {
			g, ok := read[uid]
			if seen[uid] || !ok {
				seen[uid] = true
				continue
			}
			seen[uid] = true
			visit(g.subgroups, depth+1)
			out = append(out, g)
		}
	}
	visit(uids, 0)
	return out, nil
}

// groupsIn reads the live (not hidden, not deleted) groups among uids.
func (dir *Directory) groupsIn(ctx context.Context, uids []int64) ([]group, error) {
	if len(uids) == 0 {
		return nil, nil
	}
	args := make([]any, len(uids))
	for i, u := range uids {
		args[i] = u
	}
	q := dir.d.rebind("SELECT `uid`, COALESCE(`tables_select`, ''), COALESCE(`tables_modify`, ''), " +
		"COALESCE(`non_exclude_fields`, ''), `allowed_languages`, COALESCE(`db_mountpoints`, ''), COALESCE(`subgroup`, ''), " +
		"COALESCE(`explicit_allowdeny`, ''), `workspace_perms` " +
		"FROM `be_groups` WHERE `uid` IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(uids)), ", ") +
		") AND `deleted` = 0 AND `hidden` = 0")
	rows, err := dir.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read backend groups %v: %w", uids, err)
	}
	defer rows.Close()
	var out []group
	for rows.Next() {
		var uid int64
		var sel, mod, nef, langs, mounts, sub, allow string
		var wsPerms int64
		if err := rows.Scan(&uid, &sel, &mod, &nef, &langs, &mounts, &sub, &allow, &wsPerms); err != nil {
			return nil, fmt.Errorf("read backend groups %v: %w", uids, err)
		}
		out = append(out, group{uid: uid, tablesSelect: list(sel), tablesModify: list(mod), nonExcludeFields: list(nef),
			languages: signedIDs(langs), mounts: ids(mounts), subgroups: ids(sub), explicitAllow: list(allow), workspacePerms: wsPerms})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read backend groups %v: %w", uids, err)
	}
	return out, nil
}

// Page is the part of a live page row that rights depend on.
type Page struct {
	UID, PID               int64
	Language               int64 // sys_language_uid
	L10nParent             int64
	Hidden                 bool // a frontend flag: hidden pages stay visible and editable in the backend
	OwnerUID               int64
	GroupUID               int64
	User, Group, Everybody Permission
}

// pageColumns are the columns of Page, in scanPage's order.
var pageColumns = []string{"uid", "pid", "sys_language_uid", "l10n_parent", "hidden", "perms_userid", "perms_groupid",
	"perms_user", "perms_group", "perms_everybody"}

// pageCols lists pageColumns quoted, each with prefix.
func pageCols(prefix string) string {
	out := make([]string, len(pageColumns))
	for i, c := range pageColumns {
		out[i] = prefix + "`" + c + "`"
	}
	return strings.Join(out, ", ")
}

func scanPage(rows *sql.Rows) (Page, error) {
	var p Page
	var hidden int64
	err := rows.Scan(&p.UID, &p.PID, &p.Language, &p.L10nParent, &hidden, &p.OwnerUID, &p.GroupUID, &p.User, &p.Group, &p.Everybody)
	p.Hidden = hidden != 0
	return p, err
}

// queryPages runs q and returns the pages it selects (pageColumns first), in order.
func (dir *Directory) queryPages(ctx context.Context, what, q string, args ...any) ([]Page, error) {
	rows, err := dir.db.QueryContext(ctx, dir.d.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer rows.Close()
	var out []Page
	for rows.Next() {
		p, err := scanPage(rows)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return out, nil
}

// pagesIn reads the live (workspace 0), not deleted pages among uids.
func (dir *Directory) pagesIn(ctx context.Context, uids []int64) (map[int64]Page, error) {
	if len(uids) == 0 {
		return nil, nil
	}
	args := make([]any, len(uids))
	for i, u := range uids {
		args[i] = u
	}
	ps, err := dir.queryPages(ctx, fmt.Sprintf("pages %v", uids), "SELECT "+pageCols("")+" FROM `pages` WHERE `uid` IN ("+
		strings.TrimSuffix(strings.Repeat("?, ", len(uids)), ", ")+") AND `deleted` = 0 AND `t3ver_wsid` = 0", args...)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]Page, len(ps))
	for _, p := range ps {
		out[p.UID] = p
	}
	return out, nil
}

// ownPerms are the bits the page's own row grants the user: perms_user when
// they own it, perms_group when they are a member of its group, and
// perms_everybody always.
func (u *User) ownPerms(p Page) Permission {
	perms := p.Everybody
	if p.OwnerUID == u.UID {
		perms |= p.User
	}
	if u.memberOf(p.GroupUID) {
		perms |= p.Group
	}
	return perms & AllPerms
}

// list splits a comma-separated list of names, dropping blanks.
func list(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// ids reads a comma-separated list of uids, dropping blanks and anything not
// a positive number (TYPO3 casts such entries to 0, which names nothing).
func ids(s string) []int64 {
	var out []int64
	for _, part := range list(s) {
		if n, err := strconv.ParseInt(part, 10, 64); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// signedIDs is ids for language uids, where 0 (the default language) and -1
// (all languages) count.
func signedIDs(s string) []int64 {
	var out []int64
	for _, part := range list(s) {
		if n, err := strconv.ParseInt(part, 10, 64); err == nil && n >= -1 {
			out = append(out, n)
		}
	}
	return out
}

func unique[T comparable](s []T) []T {
	var out []T
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
