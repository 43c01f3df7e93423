package store

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// genMovers is what a SQLite schema says about the settings generation:
// the tables a write to which may move it. The generation moves only by
// triggers (migrations 00006 and later: UPDATE access_generation SET gen =
// gen + 1), so a table moves it when a trigger on it names
// access_generation or a table that moves it (a trigger's write is a write
// of that table), and an UPDATE moves it too when a foreign key with an ON
// UPDATE action names the table as its parent (the action writes the child).
type genMovers struct {
	tables   map[string]bool // lower-case names: a write may move the generation
	onUpdate map[string]bool // parents of a foreign key with an ON UPDATE action
}

// forgetMovers drops db's reading of its schema (DB.movers): a migration or
// other schema change may have added a trigger.
func (db *DB) forgetMovers() { db.movers.Store(nil) }

// movers returns db's genMovers, reading the schema through tx's connection
// the first time (the one write connection is the transaction's: another
// would wait for it). Nil when it cannot be read: then every write counts as
// moving the generation.
func (tx *Tx) movers() *genMovers {
	if m := tx.db.movers.Load(); m != nil {
		return m
	}
	m, err := readMovers(tx)
	if err != nil {
		return nil
	}
	tx.db.movers.Store(m)
	return m
}

var writeTarget = regexp.MustCompile(`(?i)\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+["\x60]?([a-z_][a-z0-9_]*)`)

func readMovers(tx *Tx) (*genMovers, error) {
	ctx := context.Background()
	rows, err := tx.conn.QueryContext(ctx, "SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'")
	if err != nil {
		return nil, fmt.Errorf("read triggers: %w", err)
	}
	defer rows.Close()
	type trigger struct {
		table   string
		targets []string
	}
	var triggers []trigger
	m := &genMovers{tables: map[string]bool{"access_generation": true}, onUpdate: map[string]bool{}}
	for rows.Next() {
		var table, def string
		if err := rows.Scan(&table, &def); err != nil {
			return nil, fmt.Errorf("read triggers: %w", err)
		}
		t := trigger{table: strings.ToLower(table)}
		body := strings.ToUpper(def) // the head's "UPDATE OF", "UPDATE ON" name no table here
		if strings.Contains(body, "ACCESS_GENERATION") {
			m.tables[t.table] = true
			continue
		}
		for _, w := range writeTarget.FindAllStringSubmatch(body, -1) {
			t.targets = append(t.targets, strings.ToLower(w[1]))
		}
		triggers = append(triggers, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read triggers: %w", err)
	}
	for changed := true; changed; { // a trigger writing a moving table moves it too
		changed = false
		for _, t := range triggers {
			for _, target := range t.targets {
				if m.tables[target] && !m.tables[t.table] {
					m.tables[t.table], changed = true, true
				}
			}
		}
	}
	fks, err := tx.conn.QueryContext(ctx, `SELECT DISTINCT f."table" FROM sqlite_master s, pragma_foreign_key_list(s.name) f
		WHERE s.type = 'table' AND f.on_update NOT IN ('NO ACTION', 'RESTRICT')`)
	if err != nil {
		return nil, fmt.Errorf("read foreign keys: %w", err)
	}
	defer fks.Close()
	for fks.Next() {
		var parent string
		if err := fks.Scan(&parent); err != nil {
			return nil, fmt.Errorf("read foreign keys: %w", err)
		}
		m.onUpdate[strings.ToLower(parent)] = true
	}
	if err := fks.Err(); err != nil {
		return nil, fmt.Errorf("read foreign keys: %w", err)
	}
	return m, nil
}

var neutralWrite = regexp.MustCompile(`^(?i)(INSERT\s+INTO|UPDATE)\s+([a-z_][a-z0-9_]*)[\s(]`)

// keepsGeneration reports whether q, a statement of tx that is not a plain
// SELECT, cannot move the settings generation: on SQLite, an INSERT INTO or
// UPDATE (no DELETE, no REPLACE, no WITH, no schema change) of a table the
// schema's triggers and foreign keys keep apart from the generation
// (genMovers). Anything else may move it.
func (tx *Tx) keepsGeneration(q string) bool {
	if tx.db == nil || tx.dialect != SQLite || tx.conn == nil {
		return false
	}
	w := neutralWrite.FindStringSubmatch(strings.TrimLeft(q, " \t\r\n"))
	if w == nil {
		return false
	}
	m := tx.movers()
	if m == nil {
		return false
	}
	table := strings.ToLower(w[2])
	return !m.tables[table] && !(strings.EqualFold(w[1], "UPDATE") && m.onUpdate[table])
}
