package typo3

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"waymark/internal/demo"
	"waymark/internal/fixture"
)

// DemoConfig are the options of CreateDemo.
type DemoConfig struct {
	// Passwords are hashed with these Argon2i parameters; zero means
	// TYPO3Argon2, TYPO3's own (tests pass cheaper ones).
	Argon2 Argon2Params
	// Now stamps tstamp and crdate; zero means the current time.
	Now time.Time
	// Fixture is the site to create as TYPO3 rows, in the fixture format;
	// nil means the demo site of package demo (the bench passes its own).
	Fixture []byte
}

// DemoSites are the site configurations of the demo database: the public
// website "Nordlicht Digital" in English and German on page 1, and the
// intranet on page 20.
func DemoSites() []Site {
	return []Site{
		{Identifier: "nordlicht", RootPageID: 1, Base: "http://localhost/", WebsiteTitle: "Nordlicht Digital", Languages: []Language{
			{ID: 0, Title: "English", Locale: "en_US.UTF-8", Base: "/", Enabled: true},
			{ID: 1, Title: "Deutsch", Locale: "de_DE.UTF-8", Base: "/de/", Enabled: true},
		}},
		{Identifier: "intranet", RootPageID: 20, Base: "http://localhost/intranet/", WebsiteTitle: "Nordlicht Digital Intranet", Languages: []Language{
			{ID: 0, Title: "English", Locale: "en_US.UTF-8", Base: "/", Enabled: true},
		}},
	}
}

// WriteDemoSites writes DemoSites into dir, an installation's config/sites.
func WriteDemoSites(dir string) error {
	for _, s := range DemoSites() {
		if err := WriteSite(dir, s); err != nil {
			return err
		}
	}
	return nil
}

// CreateDemo creates the TYPO3 tables of the schema in db, which must not
// have any of them yet, and fills them with the demo site of package demo as
// TYPO3 rows: its groups, users (passwords as Argon2i, as TYPO3 13 stores
// them), pages with their permissions and translations, and content
// elements with their images. Waymark's own grants, tokens, configurations
// and skills of the fixture are not TYPO3 data and are left out. On a
// database that already has one of the tables nothing is changed.
func CreateDemo(ctx context.Context, db *sql.DB, d Dialect, cfg DemoConfig) error {
	text, name := demo.Fixture, "demo/site.yaml"
	if cfg.Fixture != nil {
		text, name = cfg.Fixture, "site.yaml"
	}
	doc, err := fixture.Decode(text, name)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	cfg.Argon2 = cmp.Or(cfg.Argon2, TYPO3Argon2)
	if cfg.Now.IsZero() {
		cfg.Now = time.Now()
	}
	rows, err := demoRows(doc, cfg)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := Create(ctx, db, d); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer tx.Rollback()
	for _, r := range rows {
		if err := r.insert(ctx, tx, d); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	if d == Postgres {
		// Identity columns do not move past explicit uids by themselves.
		for _, t := range schema() {
			key := t.columns[0].name
			q := fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%s', '%s'), COALESCE((SELECT MAX(%s) FROM %s), 0) + 1, false)`,
				d.quote(t.name), key, d.quote(key), d.quote(t.name))
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("demo: sequence of %s: %w", t.name, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("demo: commit: %w", err)
	}
	return nil
}

// Create creates the schema's tables in db. It refuses, changing nothing,
// when one of them exists already.
func Create(ctx context.Context, db *sql.DB, d Dialect) error {
	stmts, err := DDL(d)
	if err != nil {
		return err
	}
	existing, err := existingTables(ctx, db, d)
	if err != nil {
		return err
	}
	if len(existing) > 0 {
		return fmt.Errorf("the database is not empty: it has the TYPO3 table(s) %s", strings.Join(existing, ", "))
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("create tables: %s: %w", firstLine(s), err)
		}
	}
	return nil
}

// ExistingTables lists which tables of the schema db has already, so a
// command can refuse before it changes anything.
func ExistingTables(ctx context.Context, db *sql.DB, d Dialect) ([]string, error) {
	return existingTables(ctx, db, d)
}

// existingTables lists which tables of the schema db has, in its current
// database (MariaDB) or on its search path (PostgreSQL).
func existingTables(ctx context.Context, db *sql.DB, d Dialect) ([]string, error) {
	q := `SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()`
	if d == Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = ANY (current_schemas(false))`
	}
	rs, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rs.Close()
	have := map[string]bool{}
	for rs.Next() {
		var n string
		if err := rs.Scan(&n); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		have[n] = true
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	var found []string
	for _, t := range Tables() {
		if have[t] {
			found = append(found, t)
		}
	}
	return found, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSuffix(l, " (")
}

// row is one INSERT.
type row struct {
	table string
	cols  []string
	vals  []any
}

func (r *row) set(col string, v any) *row {
	r.cols = append(r.cols, col)
	r.vals = append(r.vals, v)
	return r
}

func (r row) insert(ctx context.Context, tx *sql.Tx, d Dialect) error {
	var cols, marks []string
	for i, c := range r.cols {
		cols = append(cols, d.quote(c))
		marks = append(marks, d.placeholder(i+1))
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", d.quote(r.table), strings.Join(cols, ", "), strings.Join(marks, ", "))
	if _, err := tx.ExecContext(ctx, q, r.vals...); err != nil {
		return fmt.Errorf("insert into %s: %w", r.table, err)
	}
	return nil
}

// placeholder is the n-th (1-based) bind parameter.
func (d Dialect) placeholder(n int) string {
	if d == Postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// demoRows turns the fixture into TYPO3 rows.
func demoRows(doc *fixture.Document, cfg DemoConfig) ([]row, error) {
	now := cfg.Now.Unix()
	var rows []row
	// TYPO3's tt_content.CType is an authMode field: a group that may modify
	// tt_content is given the content types the demo uses, as an
	// administrator ticks them under "Explicitly allow field values".
	var ctypes []string
	for _, c := range doc.Records {
		if t := c.Fields["CType"]; c.Table == "tt_content" && t != "" && !slices.Contains(ctypes, "tt_content:CType:"+t) {
			ctypes = append(ctypes, "tt_content:CType:"+t)
		}
	}
	slices.Sort(ctypes)
	for _, g := range doc.Groups {
		nef, err := typo3Fields(g.NonExcludeFields)
		if err != nil {
			return nil, fmt.Errorf("group %d: %w", g.UID, err)
		}
		r := row{table: "be_groups"}
		r.set("uid", g.UID).set("pid", 0).set("tstamp", now).set("crdate", now).
			set("title", g.Title).set("subgroup", csv(g.Subgroups)).set("db_mountpoints", csv(g.Mounts)).
			set("tables_select", strings.Join(g.TablesSelect, ",")).set("tables_modify", strings.Join(g.TablesModify, ",")).
			set("non_exclude_fields", strings.Join(nef, ",")).set("allowed_languages", csv(g.Languages))
		if slices.Contains(g.TablesModify, "tt_content") {
			r.set("explicit_allowdeny", strings.Join(ctypes, ","))
		}
		rows = append(rows, r)
	}
	for _, u := range doc.Users {
		hash := ""
		if u.Password != "" {
			var err error
			if hash, err = HashArgon2iPassword(u.Password, cfg.Argon2); err != nil {
				return nil, fmt.Errorf("user %s: %w", u.Username, err)
			}
		}
		lang := "default" // TYPO3's key of English
		if u.BackendLanguage != "" && u.BackendLanguage != "en" {
			lang = u.BackendLanguage
		}
		r := row{table: "be_users"}
		r.set("uid", u.UID).set("pid", 0).set("tstamp", now).set("crdate", now).
			set("username", u.Username).set("password", hash).set("admin", boolInt(u.Admin)).
			set("disable", boolInt(u.Disabled)).set("usergroup", csv(u.Groups)).
			set("db_mountpoints", csv(u.Mounts)).set("allowed_languages", csv(u.Languages)).
			set("options", 3). // TYPO3's default: mounts from the groups (1) and file mounts (2)
			set("lang", lang).set("realName", strings.ToUpper(u.Username[:1])+u.Username[1:])
		rows = append(rows, r)
	}
	for i, p := range doc.Pages {
		r := row{table: "pages"}
		r.set("uid", p.UID).set("pid", p.PID).set("tstamp", now).set("crdate", now).
			set("deleted", boolInt(p.Deleted)).set("sorting", (i+1)*256).
			set("sys_language_uid", p.Language).set("l10n_parent", p.L10nParent).set("t3ver_wsid", p.Workspace).
			set("perms_userid", p.Owner).set("perms_groupid", p.Group).
			set("perms_user", p.Perms.User).set("perms_group", p.Perms.Group).set("perms_everybody", p.Perms.Everybody).
			set("title", p.Title).set("doktype", 1).set("is_siteroot", boolInt(p.PID == 0 && p.Language == 0)).
			set("slug", slug(p.PID, p.Title))
		if err := setFields(&r, "pages", p.Fields); err != nil {
			return nil, fmt.Errorf("page %d: %w", p.UID, err)
		}
		rows = append(rows, r)
	}
	files := map[string]int64{}
	var refs []row
	for i, c := range doc.Records {
		if c.Table != "tt_content" {
			return nil, fmt.Errorf("record %s:%d: only tt_content records are known", c.Table, c.UID)
		}
		r := row{table: "tt_content"}
		r.set("uid", c.UID).set("pid", c.PID).set("tstamp", now).set("crdate", now).
			set("deleted", boolInt(c.Deleted)).set("sorting", (i+1)*256).
			set("sys_language_uid", c.Language).set("l18n_parent", c.L10nParent).set("t3ver_wsid", c.Workspace).
			set("colPos", 0)
		fields := copyFields(c.Fields)
		image, alt := fields["image"], fields["imageAlt"]
		delete(fields, "image")
		delete(fields, "imageAlt")
		if err := setFields(&r, "tt_content", fields); err != nil {
			return nil, fmt.Errorf("content element %d: %w", c.UID, err)
		}
		if image != "" {
			r.set("image", 1)
			file, ok := files[image]
			if !ok {
				file = int64(len(files) + 1)
				files[image] = file
				f := row{table: "sys_file"}
				f.set("uid", file).set("pid", 0).set("tstamp", now).set("storage", 1).
					set("identifier", "/user_upload/"+image).set("name", image).set("mime_type", mimeType(image))
				rows = append(rows, f)
			}
			ref := row{table: "sys_file_reference"}
			ref.set("uid", int64(len(refs)+1)).set("pid", c.PID).set("tstamp", now).set("crdate", now).
				set("deleted", boolInt(c.Deleted)).set("sys_language_uid", c.Language).
				set("uid_local", file).set("uid_foreign", c.UID).set("tablenames", "tt_content").
				set("fieldname", "image").set("sorting_foreign", 1).set("alternative", alt)
			refs = append(refs, ref)
		}
		rows = append(rows, r)
	}
	return append(rows, refs...), nil
}

// setFields sets a record's fixture fields on their TYPO3 columns.
func setFields(r *row, table string, fields map[string]string) error {
	names := make([]string, 0, len(fields))
	for f := range fields {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		c, ok := FieldColumn(table, f)
		if !ok || c.Table != table {
			return fmt.Errorf("field %q has no TYPO3 column of %s", f, table)
		}
		v := any(fields[f])
		if f == "colPos" || f == "ogImage" || f == "image" {
			n, err := strconv.ParseInt(fields[f], 10, 64)
			if err != nil {
				return fmt.Errorf("field %q: %q is not a number", f, fields[f])
			}
			v = n
		}
		r.set(c.Column, v)
	}
	return nil
}

// typo3Fields turns the fixture's "table:field" names of non_exclude_fields
// into TYPO3's "table:column".
func typo3Fields(list []string) ([]string, error) {
	var out []string
	for _, tf := range list {
		t, f, ok := strings.Cut(tf, ":")
		c, known := FieldColumn(t, f)
		if !ok || !known {
			return nil, fmt.Errorf("non-exclude field %q has no TYPO3 column", tf)
		}
		out = append(out, c.Table+":"+c.Column)
	}
	return out, nil
}

func copyFields(f fixture.Fields) map[string]string {
	m := make(map[string]string, len(f))
	for k, v := range f {
		m[k] = v
	}
	return m
}

func csv(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ",")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func slug(pid int64, title string) string {
	if pid == 0 {
		return "/"
	}
	s := strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "ß", "ss").Replace(strings.ToLower(title))
	return "/" + strings.Trim(nonSlug.ReplaceAllString(s, "-"), "-")
}

func mimeType(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	}
	return "application/octet-stream"
}
