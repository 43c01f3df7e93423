package typo3

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// requiredColumns are the columns Waymark reads or writes, per table; a
// TYPO3 database without one of them cannot be used.
var requiredColumns = map[string][]string{
	"be_users": {"uid", "deleted", "disable", "starttime", "endtime", "username", "realName", "password", "admin",
		"usergroup", "lang", "db_mountpoints", "options", "allowed_languages", "workspace_perms", "workspace_id", "mfa"},
	"be_groups": {"uid", "deleted", "hidden", "subgroup", "db_mountpoints", "tables_select", "tables_modify",
		"non_exclude_fields", "explicit_allowdeny", "allowed_languages", "workspace_perms"},
	"pages": {"uid", "pid", "tstamp", "deleted", "hidden", "sorting", "sys_language_uid", "l10n_parent", "t3ver_wsid", "editlock",
		"perms_userid", "perms_groupid", "perms_user", "perms_group", "perms_everybody",
		"title", "nav_title", "slug", "seo_title", "description", "keywords", "og_title", "og_description", "og_image", "abstract"},
	"tt_content": {"uid", "pid", "tstamp", "deleted", "hidden", "sorting", "sys_language_uid", "l18n_parent", "t3ver_wsid", "editlock",
		"CType", "colPos", "header", "subheader", "bodytext"},
	"sys_file":           {"uid", "name"},
	"sys_file_reference": {"uid", "tstamp", "deleted", "t3ver_wsid", "uid_local", "uid_foreign", "tablenames", "fieldname", "sorting_foreign", "alternative"},
	"sys_history": {"uid", "tstamp", "actiontype", "usertype", "userid", "recuid", "tablename", "history_data",
		"workspace", "correlation_id"},
	"sys_log": {"tstamp", "userid", "action", "recuid", "tablename", "recpid", "error", "details", "type", "channel",
		"details_nr", "log_data", "event_pid", "workspace", "level"},
	"cache_pages":      {"identifier"},
	"cache_pages_tags": {"identifier", "tag"},
}

// Report is what Check finds in a TYPO3 installation; it changes nothing.
type Report struct {
	MissingTables  []string
	MissingColumns []string // "table.column" of tables that exist
	// Hints about the TYPO3 version, from columns that came with one.
	VersionHints []string

	Sites    []Site
	SitesErr error    // why the site configurations could not be read
	Users    int      // active backend users (not deleted or disabled, inside start and end time)
	CanLogIn int      // of them, with a password hash Waymark verifies
	LogInAs  []string // their usernames, sorted
	// MFA are the usernames of active users with a second factor in TYPO3,
	// sorted: they cannot log in with a password, only from the TYPO3 backend.
	MFA       []string
	CLI       bool // TYPO3's command-line user _cli_ exists (never a password login)
	NoPass    int  // of them, without a password
	Admins    int
	HashKinds map[HashKind]int // unsupported kinds among the active users
}

// OK tells whether Waymark can run on the installation.
func (r *Report) OK() bool {
	return len(r.MissingTables) == 0 && len(r.MissingColumns) == 0 && r.SitesErr == nil
}

// Lines renders the report for an operator, one finding a line.
func (r *Report) Lines() []string {
	var out []string
	for _, t := range r.MissingTables {
		out = append(out, "missing table: "+t)
	}
	for _, c := range r.MissingColumns {
		out = append(out, "missing column: "+c)
	}
	out = append(out, r.VersionHints...)
	if r.SitesErr != nil {
		out = append(out, "sites: "+r.SitesErr.Error())
	}
	for _, s := range r.Sites {
		var langs []string
		for _, l := range s.Languages {
			state := ""
			if !l.Enabled {
				state = ", disabled"
			}
			langs = append(langs, fmt.Sprintf("%d %s (%s%s)", l.ID, l.Title, l.Locale, state))
		}
		name := s.Identifier
		if s.WebsiteTitle != "" {
			name += fmt.Sprintf(" %q", s.WebsiteTitle)
		}
		out = append(out, fmt.Sprintf("site %s: root page %d, %s", name, s.RootPageID, strings.Join(langs, "; ")))
	}
	if len(r.MissingTables) == 0 {
		out = append(out, fmt.Sprintf("backend users: %d active (%d admins), %d can log in to Waymark, %d without password",
			r.Users, r.Admins, r.CanLogIn, r.NoPass))
		if len(r.LogInAs) > 0 {
			out = append(out, "can log in to Waymark: "+strings.Join(r.LogInAs, ", "))
		}
		if len(r.MFA) > 0 {
			out = append(out, "second factor (MFA) active, no password login — they open Waymark from the TYPO3 backend: "+
				strings.Join(r.MFA, ", "))
		}
		if r.CLI {
			out = append(out, "_cli_ is TYPO3's command-line user: no password login")
		}
		kinds := make([]string, 0, len(r.HashKinds))
		for k := range r.HashKinds {
			kinds = append(kinds, string(k))
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			out = append(out, fmt.Sprintf("unsupported password hash %s: %d users (they log in to TYPO3 once to get rehashed)",
				k, r.HashKinds[HashKind(k)]))
		}
	}
	return out
}

// Check reports what Waymark sees of a TYPO3 installation: its database
// (tables and columns Waymark needs, version hints, backend users and their
// hash kinds) and its site configurations under sitesDir. It reads only.
func Check(ctx context.Context, db *sql.DB, d Dialect, sitesDir string, now int64) (*Report, error) {
	r := &Report{HashKinds: map[HashKind]int{}}
	have, err := columns(ctx, db, d)
	if err != nil {
		return nil, err
	}
	tables := make([]string, 0, len(requiredColumns))
	for t := range requiredColumns {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	for _, t := range tables {
		cols, ok := have[t]
		if !ok {
			r.MissingTables = append(r.MissingTables, t)
			continue
		}
		for _, c := range requiredColumns[t] {
			if !cols[c] {
				r.MissingColumns = append(r.MissingColumns, t+"."+c)
			}
		}
	}
	if have["pages"]["tsconfig_includes"] {
		r.VersionHints = append(r.VersionHints, "pages.tsconfig_includes exists: TYPO3 12 or later")
	}
	if have["sys_log"]["channel"] {
		r.VersionHints = append(r.VersionHints, "sys_log.channel exists: TYPO3 12 or later")
	}
	if have["pages"]["seo_title"] {
		r.VersionHints = append(r.VersionHints, "pages.seo_title exists: the core extension seo is installed")
	}
	r.Sites, r.SitesErr = LoadSites(sitesDir)
	if len(r.MissingTables) > 0 || !have["be_users"]["password"] {
		return r, nil
	}
	mfaCol := "NULL"
	if have["be_users"]["mfa"] {
		mfaCol = "`mfa`"
	}
	rs, err := db.QueryContext(ctx, d.rebind("SELECT `username`, `admin`, `password`, "+mfaCol+" FROM `be_users` WHERE `deleted` = 0 AND `disable` = 0 "+
		"AND `starttime` <= ? AND (`endtime` = 0 OR `endtime` > ?)"), now, now)
	if err != nil {
		return nil, fmt.Errorf("typo3 check: backend users: %w", err)
	}
	defer rs.Close()
	for rs.Next() {
		var admin int64
		var name, hash string
		var mfa []byte
		if err := rs.Scan(&name, &admin, &hash, &mfa); err != nil {
			return nil, fmt.Errorf("typo3 check: backend users: %w", err)
		}
		r.Users++
		if admin&1 == 1 {
			r.Admins++
		}
		switch kind := ClassifyHash(hash); {
		case name == cliUser:
			r.CLI = true
		case mfaActive(mfa):
			r.MFA = append(r.MFA, name)
		case kind == HashEmpty:
			r.NoPass++
		case kind == HashArgon2i, kind == HashArgon2id, kind == HashBcrypt:
			r.CanLogIn++
			r.LogInAs = append(r.LogInAs, name)
		default:
			r.HashKinds[kind]++
		}
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("typo3 check: backend users: %w", err)
	}
	sort.Strings(r.LogInAs)
	sort.Strings(r.MFA)
	return r, nil
}

// columns lists the columns of every table in the current database (MariaDB)
// or on the search path (PostgreSQL).
func columns(ctx context.Context, db *sql.DB, d Dialect) (map[string]map[string]bool, error) {
	q := "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = DATABASE()"
	if d == Postgres {
		q = "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = ANY (current_schemas(false))"
	}
	rs, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("typo3 check: list columns: %w", err)
	}
	defer rs.Close()
	out := map[string]map[string]bool{}
	for rs.Next() {
		var t, c string
		if err := rs.Scan(&t, &c); err != nil {
			return nil, fmt.Errorf("typo3 check: list columns: %w", err)
		}
		if out[t] == nil {
			out[t] = map[string]bool{}
		}
		out[t][c] = true
	}
	return out, rs.Err()
}
