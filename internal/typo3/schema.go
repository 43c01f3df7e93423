package typo3

import (
	"fmt"
	"strings"
)

// Dialect is the database system of a TYPO3 installation.
type Dialect string

// The two systems Waymark reads TYPO3 from. TYPO3 supports SQLite too; a
// site on SQLite is not a target (it is a development setup).
const (
	MariaDB  Dialect = "mysql" // MariaDB and MySQL
	Postgres Dialect = "postgres"
)

// colType is the small vocabulary of column types that TYPO3's schema uses
// for the columns Waymark knows; ddl renders it per dialect the way TYPO3's
// Doctrine schema does (unsigned exists only on MariaDB).
type colType int

const (
	tUID        colType = iota // integer unsigned auto increment, the primary key
	tInt                       // integer
	tUint                      // integer unsigned
	tSmallint                  // smallint
	tUsmallint                 // smallint unsigned (flags and perms bits)
	tVarchar                   // varchar(size)
	tText                      // text, nullable
	tMediumtext                // mediumtext on MariaDB, text on PostgreSQL, nullable
	tBlob                      // mediumblob on MariaDB, bytea on PostgreSQL, nullable
	tLongblob                  // longblob on MariaDB, bytea on PostgreSQL, nullable
	tFloat                     // double precision
)

type column struct {
	name    string
	typ     colType
	size    int    // varchar length
	def     string // default as SQL literal; "" for none
	notNull bool
}

type table struct {
	name    string
	columns []column
	indexes [][]string // plain indexes, each a column list
}

// Shorthands for the recurring column shapes of TYPO3's DefaultTcaSchema:
// management columns are NOT NULL with default 0, strings NOT NULL with
// default ”.
func uid(name string) column         { return column{name: name, typ: tUID, notNull: true} }
func uintCol(name string) column     { return column{name, tUint, 0, "0", true} }
func intCol(name, def string) column { return column{name, tInt, 0, def, true} }
func flag(name string) column        { return column{name, tUsmallint, 0, "0", true} }
func small(name string) column       { return column{name, tSmallint, 0, "0", true} }
func varchar(name string, n int, def string) column {
	return column{name, tVarchar, n, "'" + def + "'", true}
}
func text(name string) column       { return column{name: name, typ: tText} }
func mediumtext(name string) column { return column{name: name, typ: tMediumtext} }

// recordColumns are what DefaultTcaSchema adds to a table whose TCA ctrl has
// tstamp, crdate, delete and the given enable columns.
func recordColumns(disabled string) []column {
	return []column{
		uid("uid"), uintCol("pid"), uintCol("tstamp"), uintCol("crdate"), flag("deleted"), flag(disabled),
	}
}

// languageColumns are the translation and versioning columns of pages and
// tt_content; parent is the table's transOrigPointerField (l10n_parent on
// pages, l18n_parent on tt_content) and diff its transOrigDiffSourceField.
func languageColumns(parent, diff string) []column {
	return []column{
		uintCol("starttime"), uintCol("endtime"), varchar("fe_group", 255, "0"), intCol("sorting", "0"),
		text("rowDescription"), flag("editlock"),
		intCol("sys_language_uid", "0"), uintCol(parent), uintCol("l10n_source"), text("l10n_state"),
		{name: diff, typ: tBlob}, uintCol("t3_origuid"),
		uintCol("t3ver_oid"), uintCol("t3ver_wsid"), small("t3ver_state"), intCol("t3ver_stage", "0"),
	}
}

// schema lists the tables Waymark reads and writes, with the columns TYPO3
// 13.4 creates for them that Waymark uses, plus every column needed for a
// valid row. A real installation has more columns (and extensions add their
// own); Waymark names the columns it reads and writes, so it ignores them.
func schema() []table {
	return []table{
		{name: "be_groups", columns: append(recordColumns("hidden"),
			varchar("title", 50, ""), text("description"), text("subgroup"),
			text("db_mountpoints"), text("tables_select"), text("tables_modify"), text("non_exclude_fields"),
			text("explicit_allowdeny"), varchar("allowed_languages", 255, ""), text("groupMods"), text("TSconfig"),
			small("workspace_perms"),
		), indexes: [][]string{{"pid"}}},
		{name: "be_users", columns: append(recordColumns("disable"),
			uintCol("starttime"), uintCol("endtime"), text("description"),
			varchar("username", 50, ""), varchar("password", 255, ""), flag("admin"), text("usergroup"),
			varchar("lang", 10, "default"), varchar("email", 255, ""), varchar("realName", 80, ""),
			text("db_mountpoints"), flag("options"), varchar("allowed_languages", 255, ""), text("userMods"),
			text("TSconfig"), uintCol("lastlogin"), intCol("workspace_id", "0"), column{name: "uc", typ: tBlob},
			// workspace_perms defaults to 1 (live) on users, 0 on groups, as
			// their TCA; mfa is the core's ext_tables.sql mediumblob.
			column{"workspace_perms", tSmallint, 0, "1", true}, column{name: "mfa", typ: tBlob},
		), indexes: [][]string{{"pid"}, {"username"}}},
		{name: "pages", columns: append(append(recordColumns("hidden"), languageColumns("l10n_parent", "l10n_diffsource")...),
			uintCol("perms_userid"), uintCol("perms_groupid"),
			flag("perms_user"), flag("perms_group"), flag("perms_everybody"),
			varchar("title", 255, ""), column{name: "slug", typ: tVarchar, size: 2048}, uintCol("doktype"),
			small("is_siteroot"), varchar("nav_title", 255, ""), varchar("subtitle", 255, ""),
			varchar("seo_title", 255, ""), text("description"), text("keywords"), text("abstract"),
			varchar("og_title", 255, ""), text("og_description"), uintCol("og_image"),
			varchar("author", 255, ""), uintCol("SYS_LASTCHANGED"), text("TSconfig"),
		), indexes: [][]string{{"pid", "deleted", "hidden"}, {"l10n_parent", "sys_language_uid"}, {"t3ver_oid", "t3ver_wsid"}}},
		{name: "tt_content", columns: append(append(recordColumns("hidden"), languageColumns("l18n_parent", "l18n_diffsource")...),
			varchar("CType", 255, ""), intCol("colPos", "0"),
			varchar("header", 255, ""), varchar("header_layout", 30, "0"), varchar("subheader", 255, ""),
			mediumtext("bodytext"), uintCol("image"), varchar("frame_class", 60, "default"),
		), indexes: [][]string{{"pid", "deleted", "hidden"}, {"l18n_parent", "sys_language_uid"}, {"t3ver_oid", "t3ver_wsid"}}},
		{name: "sys_file", columns: []column{
			uid("uid"), uintCol("pid"), uintCol("tstamp"), uintCol("storage"),
			text("identifier"), varchar("name", 255, ""), varchar("mime_type", 255, ""),
		}},
		{name: "sys_file_reference", columns: []column{
			uid("uid"), uintCol("pid"), uintCol("tstamp"), uintCol("crdate"), flag("deleted"), flag("hidden"),
			intCol("sys_language_uid", "0"), uintCol("l10n_parent"), {name: "l10n_diffsource", typ: tBlob},
			uintCol("t3ver_oid"), uintCol("t3ver_wsid"), small("t3ver_state"), intCol("t3ver_stage", "0"),
			uintCol("uid_local"), uintCol("uid_foreign"), varchar("tablenames", 64, ""), varchar("fieldname", 64, ""),
			intCol("sorting_foreign", "0"), text("title"), text("description"), text("alternative"),
		}, indexes: [][]string{{"uid_foreign"}, {"uid_local"}}},
		// Not TCA tables: their columns are those of the core's ext_tables.sql.
		{name: "sys_history", columns: []column{
			uid("uid"), uintCol("tstamp"), small("actiontype"), varchar("usertype", 2, "BE"),
			{name: "userid", typ: tUint}, {name: "originaluserid", typ: tUint},
			intCol("recuid", "0"), varchar("tablename", 255, ""), mediumtext("history_data"),
			{name: "workspace", typ: tInt, def: "0"}, {name: "correlation_id", typ: tVarchar, size: 255, def: "''"},
		}, indexes: [][]string{{"tablename", "recuid"}, {"tablename", "tstamp"}}},
		{name: "sys_log", columns: []column{
			uid("uid"), uintCol("tstamp"), uintCol("userid"), flag("action"), uintCol("recuid"),
			varchar("tablename", 255, ""), intCol("recpid", "0"), flag("error"), text("details"), flag("type"),
			varchar("channel", 20, "default"), small("details_nr"), varchar("IP", 39, ""), text("log_data"),
			intCol("event_pid", "-1"), intCol("workspace", "0"), varchar("NEWid", 30, ""),
			varchar("request_id", 13, ""), {"time_micro", tFloat, 0, "0", true}, varchar("component", 255, ""),
			varchar("level", 10, "info"), text("message"), text("data"),
		}, indexes: [][]string{{"recuid"}, {"userid", "event_pid"}}},
		// The page cache of TYPO3's database cache backend.
		{name: "cache_pages", columns: []column{
			uid("id"), varchar("identifier", 250, ""), uintCol("expires"), {name: "content", typ: tLongblob},
		}, indexes: [][]string{{"identifier", "expires"}}},
		{name: "cache_pages_tags", columns: []column{
			uid("id"), varchar("identifier", 250, ""), varchar("tag", 250, ""),
		}, indexes: [][]string{{"identifier"}, {"tag"}}},
	}
}

// Tables names the tables of the schema, in creation order.
func Tables() []string {
	var names []string
	for _, t := range schema() {
		names = append(names, t.name)
	}
	return names
}

// quote quotes an identifier as TYPO3's query builder does: TYPO3 quotes
// every name, so on PostgreSQL "CType" and "colPos" keep their case.
func (d Dialect) quote(name string) string {
	if d == MariaDB {
		return "`" + name + "`"
	}
	return `"` + name + `"`
}

// DDL returns the CREATE TABLE and CREATE INDEX statements of the schema.
func DDL(d Dialect) ([]string, error) {
	if d != MariaDB && d != Postgres {
		return nil, fmt.Errorf("ddl: unknown dialect %q", d)
	}
	var stmts []string
	for _, t := range schema() {
		var cols []string
		var pk string
		for _, c := range t.columns {
			cols = append(cols, d.quote(c.name)+" "+d.columnSQL(c))
			if c.typ == tUID {
				pk = c.name
			}
		}
		cols = append(cols, "PRIMARY KEY ("+d.quote(pk)+")")
		create := "CREATE TABLE " + d.quote(t.name) + " (\n  " + strings.Join(cols, ",\n  ") + "\n)"
		if d == MariaDB {
			create += " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"
		}
		stmts = append(stmts, create)
		for i, idx := range t.indexes {
			var q []string
			for _, c := range idx {
				if d == MariaDB && t.needsPrefix(c) {
					q = append(q, d.quote(c)+"(191)")
				} else {
					q = append(q, d.quote(c))
				}
			}
			stmts = append(stmts, fmt.Sprintf("CREATE INDEX %s ON %s (%s)",
				d.quote(fmt.Sprintf("%s_i%d", t.name, i+1)), d.quote(t.name), strings.Join(q, ", ")))
		}
	}
	return stmts, nil
}

// needsPrefix tells a MariaDB index needs a prefix length on the column (as
// TYPO3's own keys on tablename(100) and tag(191) have): text, and strings
// longer than 191 characters of utf8mb4.
func (t table) needsPrefix(name string) bool {
	for _, c := range t.columns {
		if c.name == name {
			return c.typ == tText || c.typ == tMediumtext || c.typ == tVarchar && c.size > 191
		}
	}
	panic("typo3: index on unknown column " + t.name + "." + name)
}

func (d Dialect) columnSQL(c column) string {
	var s string
	my := d == MariaDB
	switch c.typ {
	case tUID:
		if my {
			return "INT UNSIGNED NOT NULL AUTO_INCREMENT"
		}
		return "INTEGER GENERATED BY DEFAULT AS IDENTITY"
	case tInt:
		s = "INT"
		if !my {
			s = "INTEGER"
		}
	case tUint:
		s = "INT UNSIGNED"
		if !my {
			s = "INTEGER"
		}
	case tSmallint:
		s = "SMALLINT"
	case tUsmallint:
		s = "SMALLINT UNSIGNED"
		if !my {
			s = "SMALLINT"
		}
	case tVarchar:
		s = fmt.Sprintf("VARCHAR(%d)", c.size)
	case tText:
		s = "TEXT"
	case tMediumtext:
		s = "MEDIUMTEXT"
		if !my {
			s = "TEXT"
		}
	case tBlob:
		s = "MEDIUMBLOB"
		if !my {
			s = "BYTEA"
		}
	case tLongblob:
		s = "LONGBLOB"
		if !my {
			s = "BYTEA"
		}
	case tFloat:
		s = "DOUBLE PRECISION"
	}
	if c.def != "" {
		s += " DEFAULT " + c.def
	}
	if c.notNull {
		s += " NOT NULL"
	}
	return s
}
