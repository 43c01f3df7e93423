// Package live puts a TYPO3 installation behind Waymark's seams: its pages,
// content elements and site languages as the content source
// (content.Source), its backend users, groups and rights as the user
// directory (access.Directory), and its password hashes for logins
// (auth.PasswordDirectory). Every read goes to the TYPO3 database at the
// time of the call — a change made in TYPO3 counts at the next decision.
//
// Waymark's own part of a TYPO3 user stays in Waymark's store under the
// TYPO3 uids: a row in be_users per user who logged in or holds a token or
// grant (username and grants only; no password, no rights) and a row in
// be_groups per group with grants. Sessions and API tokens name these uids.
package live

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"waymark/internal/access"
	"waymark/internal/auth"
	"waymark/internal/content"
	"waymark/internal/fault"
	"waymark/internal/store"
	"waymark/internal/typo3"
)

// ErrUnavailable is wrapped by a read that failed because the TYPO3 database
// does not answer (503 typo3_unavailable): nothing was changed, and the
// request can be tried again once TYPO3 is back.
var ErrUnavailable = fault.New(fault.Unavailable, "typo3_unavailable",
	"the TYPO3 database does not answer; nothing was changed, try again in a moment")

// reached is err of a read, wrapped with ErrUnavailable when the TYPO3
// database does not answer a ping now. Domain answers (not found, unknown or
// inactive user) pass unchanged and cost no ping.
func (t *TYPO3) reached(ctx context.Context, err error) error {
	var inactive *typo3.InactiveError
	if err == nil || errors.Is(err, content.ErrNotFound) || errors.Is(err, typo3.ErrUnknownUser) || errors.As(err, &inactive) {
		return err
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if t.db.PingContext(pctx) == nil {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// ErrMFARequired refuses the password login of a TYPO3 user with an active
// second factor (401 mfa_required): Waymark cannot ask for the second
// factor, so she opens Waymark from the TYPO3 backend, module "Waymark".
var ErrMFARequired = fault.New(fault.Unauthenticated, "mfa_required",
	"this account signs in to TYPO3 with a second factor: open Waymark from the TYPO3 backend (module \"Waymark\")")

// Tables are the TYPO3 tables the reads need.
var Tables = []string{"be_groups", "be_users", "pages", "tt_content", "sys_file", "sys_file_reference"}

// TYPO3 is one TYPO3 installation as Waymark's content source, user
// directory and password directory.
type TYPO3 struct {
	db      *sql.DB
	d       typo3.Dialect
	content *typo3.Content
	dir     *typo3.Directory
	sites   []typo3.Site
}

var (
	_ content.Source         = (*TYPO3)(nil)
	_ access.Directory       = (*TYPO3)(nil)
	_ auth.PasswordDirectory = (*TYPO3)(nil)
)

// New checks the TYPO3 database db (dialect d) and the site configurations
// under sitesDir and returns the installation. A missing table or a site
// configuration that cannot be read is a one-line error; nothing is written.
// now decides start and end times of users (nil: time.Now).
func New(ctx context.Context, db *sql.DB, d typo3.Dialect, sitesDir string, now func() time.Time) (*TYPO3, error) {
	have, err := typo3.ExistingTables(ctx, db, d)
	if err != nil {
		return nil, fmt.Errorf("typo3 database: %w", err)
	}
	var missing []string
	for _, t := range Tables {
		if !slices.Contains(have, t) {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("typo3 database: missing tables %s (is it a TYPO3 13.4 or 14.3 database?)", strings.Join(missing, ", "))
	}
	sites, err := typo3.LoadSites(sitesDir)
	if err != nil {
		return nil, fmt.Errorf("typo3 sites: %w", err)
	}
	c, err := typo3.NewContent(db, d)
	if err != nil {
		return nil, err
	}
	dir, err := typo3.NewDirectory(db, d, &typo3.DirectoryConfig{Now: now})
	if err != nil {
		return nil, err
	}
	return &TYPO3{db: db, d: d, content: c, dir: dir, sites: sites}, nil
}

// Writer returns the writer of approved changes into this installation's
// database — the same connection the reads use; now stamps the rows (nil:
// time.Now).
func (t *TYPO3) Writer(now func() time.Time) (*typo3.Writer, error) {
	return typo3.NewWriter(t.db, t.d, now)
}

// Sites are the site configurations read at New.
func (t *TYPO3) Sites() []typo3.Site { return t.sites }

// read reports whether table is one TYPO3 content reads (pages and
// tt_content); other tables have no records in this source.
func read(table string) bool { return table == "pages" || table == "tt_content" }

// Get reads one record, deleted or not.
func (t *TYPO3) Get(ctx context.Context, _ store.Querier, table string, uid int64) (content.Record, error) {
	if !read(table) {
		return content.Record{}, fmt.Errorf("%s:%d: %w", table, uid, content.ErrNotFound)
	}
	r, err := t.content.Get(ctx, table, uid)
	return r, t.reached(ctx, err)
}

// OnPage lists the live records of table on page pid in languages.
func (t *TYPO3) OnPage(ctx context.Context, _ store.Querier, table string, pid int64, languages ...int64) ([]content.Record, error) {
	if !read(table) {
		return nil, nil
	}
	out, err := t.content.OnPage(ctx, table, pid, languages...)
	return out, t.reached(ctx, err)
}

// Translation returns the live translation of parent into language.
func (t *TYPO3) Translation(ctx context.Context, _ store.Querier, table string, parent, language int64) (content.Record, error) {
	if !read(table) {
		return content.Record{}, fmt.Errorf("%s:%d in language %d: %w", table, parent, language, content.ErrNotFound)
	}
	r, err := t.content.Translation(ctx, table, parent, language)
	return r, t.reached(ctx, err)
}

// TranslationLanguages lists the languages of parent's live translations.
func (t *TYPO3) TranslationLanguages(ctx context.Context, _ store.Querier, table string, parent int64) ([]int64, error) {
	if !read(table) {
		return nil, nil
	}
	out, err := t.content.TranslationLanguages(ctx, table, parent)
	if out == nil && err == nil {
		out = []int64{} // as the built-in source: an empty list, not none
	}
	return out, t.reached(ctx, err)
}

// Heads reads the records of table among uids, deleted or not.
func (t *TYPO3) Heads(ctx context.Context, _ store.Querier, table string, uids []int64) ([]content.Record, error) {
	if !read(table) || len(uids) == 0 {
		return nil, nil
	}
	out, err := t.content.Heads(ctx, table, uids)
	return out, t.reached(ctx, err)
}

// Languages lists the languages of the site configurations by languageId
// (0, the default language, included as the built-in languages table has
// it), with the language code of the locale ("de" for de_DE.UTF-8) as
// Waymark's locale; a languageId two sites share is listed once, with the
// first site's title.
func (t *TYPO3) Languages(context.Context, store.Querier) ([]content.SiteLanguage, error) {
	seen := map[int64]bool{}
	var out []content.SiteLanguage
	for _, s := range t.sites {
		for _, l := range s.Languages {
			if l.ID < 0 || seen[l.ID] {
				continue
			}
			seen[l.ID] = true
			out = append(out, content.SiteLanguage{UID: l.ID, Title: l.Title, Locale: l.Code()})
		}
	}
	slices.SortFunc(out, func(a, b content.SiteLanguage) int { return int(a.UID - b.UID) })
	return out, nil
}

// backendLanguage is Waymark's code of TYPO3's be_users.lang ("default" is English).
func backendLanguage(lang string) string {
	if lang == "" || lang == "default" {
		return "en"
	}
	return lang
}

// LoadActor reads the TYPO3 user uid and its rights now, with the grants
// Waymark keeps for the user and its groups. A disabled, not yet active or
// expired user is an inactive actor; a missing or deleted one ErrNoUser.
func (t *TYPO3) LoadActor(ctx context.Context, q store.Querier, uid int64) (*access.Actor, error) {
	tu, err := t.dir.UserByUID(ctx, uid)
	var inactive *typo3.InactiveError
	switch {
	case errors.Is(err, typo3.ErrUnknownUser):
		return nil, access.ErrNoUser
	case errors.As(err, &inactive):
		return access.NewActor(access.User{UID: uid, Username: inactive.Username, Disabled: true, BackendLanguage: "en"}, access.Rights{}), nil
	case err != nil:
		return nil, t.reached(ctx, err)
	}
	grants, err := waymarkGrants(ctx, q, uid, tu.Groups)
	if err != nil {
		return nil, err
	}
	var fields []string
	for _, f := range tu.NonExcludeFields {
		if wf, ok := typo3.WaymarkField(f); ok {
			fields = append(fields, wf)
		}
	}
	u := access.User{
		UID: tu.UID, Username: tu.Username, Admin: tu.Admin, BackendLanguage: backendLanguage(tu.Lang),
		Groups: tu.Groups, Languages: tu.AllowedLanguages, Mounts: tu.Mounts, Grants: grants, PasswordMark: tu.PasswordMark(),
	}
	return access.NewActor(u, access.Rights{
		AllGroups: tu.Groups, TablesSelect: tu.TablesSelect, TablesModify: tu.TablesModify,
		NonExcludeFields: fields, Languages: tu.AllowedLanguages, Mounts: tu.Mounts, Grants: grants,
		AuthMode: typo3.AuthModeFields, ExplicitAllow: tu.ExplicitAllow,
	}), nil
}

// waymarkGrants are the grants Waymark keeps for TYPO3 user uid and its
// groups (Waymark's be_users and be_groups rows under the TYPO3 uids).
func waymarkGrants(ctx context.Context, q store.Querier, uid int64, groups []int64) ([]string, error) {
	var out []string
	own, err := access.BuiltinDirectory{}.LoadUser(ctx, q, uid)
	switch {
	case err == nil:
		out = append(out, own.Grants...)
	case !errors.Is(err, access.ErrNoUser):
		return nil, err
	}
	if len(groups) > 0 {
		all, err := access.LoadGroups(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			out = append(out, all[g].Grants...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// LoadUser reads the TYPO3 user uid.
func (t *TYPO3) LoadUser(ctx context.Context, q store.Querier, uid int64) (access.User, error) {
	a, err := t.LoadActor(ctx, q, uid)
	if err != nil {
		return access.User{}, err
	}
	return a.User, nil
}

// LoadUserByName reads the TYPO3 user username.
func (t *TYPO3) LoadUserByName(ctx context.Context, q store.Querier, username string) (access.User, error) {
	tu, err := t.dir.User(ctx, username)
	var inactive *typo3.InactiveError
	switch {
	case errors.Is(err, typo3.ErrUnknownUser):
		return access.User{}, access.ErrNoUser
	case errors.As(err, &inactive):
		all, err := t.dir.Users(ctx)
		if err != nil {
			return access.User{}, t.reached(ctx, err)
		}
		for _, u := range all {
			if u.Username == inactive.Username {
				return t.LoadUser(ctx, q, u.UID)
			}
		}
		return access.User{}, access.ErrNoUser
	case err != nil:
		return access.User{}, t.reached(ctx, err)
	}
	return t.LoadUser(ctx, q, tu.UID)
}

// CheckLogin checks username and password against TYPO3's be_users as
// TYPO3 stores them, then keeps Waymark's row of the user (username only)
// in Waymark's database db, which its session names. A hash Waymark cannot verify refuses the login;
// the error names the kind for the operator's log, never the hash.
func (t *TYPO3) CheckLogin(ctx context.Context, db *store.DB, username, password string) (int64, error) {
	tu, err := t.dir.Login(ctx, username, password)
	switch {
	case errors.Is(err, typo3.ErrWrongPassword):
		return 0, auth.ErrUnauthenticated
	case errors.Is(err, typo3.ErrMFARequired):
		// Not ErrUnauthenticated, which the login answers as a wrong
		// password: the password was right, and the user is told where to go.
		return 0, fmt.Errorf("%w: %w", ErrMFARequired, err)
	case errors.Is(err, typo3.ErrUnsupportedHash), errors.Is(err, typo3.ErrMalformedHash):
		// Refused as a wrong password; the operator's log names the kind.
		return 0, fmt.Errorf("%w: %w", auth.ErrUnauthenticated, err)
	case err != nil:
		return 0, fmt.Errorf("typo3 login: %w", t.reached(ctx, err))
	}
	if err := KeepUser(ctx, db, tu.UID, tu.Username); err != nil {
		return 0, err
	}
	return tu.UID, nil
}

// KeepUser makes sure Waymark's be_users has a row for TYPO3 user uid
// (access.KeepUserTx), for a login or a token.
func KeepUser(ctx context.Context, db *store.DB, uid int64, username string) error {
	return db.InTx(ctx, func(tx *store.Tx) error { return access.KeepUserTx(ctx, tx, uid, username) })
}

// Workspace is the workspace TYPO3 puts the user uid's changes in now
// (typo3.Directory.Workspace): ID 0 live, a sys_workspace uid with its
// title, or typo3.NoWorkspace. Without EXT:workspaces it is live.
func (t *TYPO3) Workspace(ctx context.Context, uid int64) (typo3.Workspace, error) {
	u, err := t.dir.UserByUID(ctx, uid)
	if err != nil {
		return typo3.Workspace{}, t.reached(ctx, err)
	}
	w, err := t.dir.Workspace(ctx, u)
	return w, t.reached(ctx, err)
}

var _ access.Roster = (*TYPO3)(nil)

// UserUIDs lists the uids of TYPO3's backend users that are not deleted
// (access.Roster: the administration's list).
func (t *TYPO3) UserUIDs(ctx context.Context) ([]int64, error) {
	all, err := t.dir.Users(ctx)
	if err != nil {
		return nil, t.reached(ctx, err)
	}
	out := make([]int64, len(all))
	for i, u := range all {
		out[i] = u.UID
	}
	return out, nil
}

// RosterGroups lists TYPO3's backend groups that are not deleted, with
// uid, title and subgroups (access.Roster).
func (t *TYPO3) RosterGroups(ctx context.Context) ([]access.Group, error) {
	all, err := t.dir.Groups(ctx)
	if err != nil {
		return nil, t.reached(ctx, err)
	}
	out := make([]access.Group, len(all))
	for i, g := range all {
		out[i] = access.Group{UID: g.UID, Title: g.Title, Subgroups: g.Subgroups}
	}
	return out, nil
}

// GroupExists reports whether TYPO3 has the backend group uid (not deleted;
// a hidden group exists but grants nothing).
func (t *TYPO3) GroupExists(ctx context.Context, uid int64) (bool, error) {
	all, err := t.dir.Groups(ctx)
	if err != nil {
		return false, t.reached(ctx, err)
	}
	for _, g := range all {
		if g.UID == uid {
			return true, nil
		}
	}
	return false, nil
}
