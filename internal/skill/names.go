package skill

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"waymark/internal/store"
)

// LocalNames are a skill's names in the UI languages ("en", "de"): the site
// administrator's labels of the skill (the fixture's skills[].names), shown
// to an editor whose UI language has one instead of the version's name.
// They are not part of the version or its digest: the version's name stays
// what was approved, and what the skill instructs does not change with them.
type LocalNames map[string]string

// MaxNameLen is the most characters a name may have, in the SKILL.md's
// name as in LocalNames.
const MaxNameLen = maxNameLen

// In returns the name for the UI language lang, else fallback (the
// version's name).
func (n LocalNames) In(lang, fallback string) string {
	if s := n[lang]; s != "" {
		return s
	}
	return fallback
}

// encodeNames stores names: "" for none, else a JSON object.
func encodeNames(n LocalNames) string {
	if len(n) == 0 {
		return ""
	}
	b, _ := json.Marshal(n) // a map of strings always encodes
	return string(b)
}

func decodeNames(s string) (LocalNames, error) {
	if s == "" {
		return nil, nil
	}
	var n LocalNames
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		return nil, err
	}
	return n, nil
}

// localNamesOf reads the names of skill uid (nil for none).
func localNamesOf(ctx context.Context, q store.Querier, uid int64) (LocalNames, error) {
	var s string
	if err := q.QueryRow(ctx, "SELECT names FROM skills WHERE uid = ?", uid).Scan(&s); err != nil {
		return nil, fmt.Errorf("names of skill %d: %w", uid, err)
	}
	return decodeNames(s)
}

// AllLocalNames reads the names of every skill that has some, by skill uid.
func AllLocalNames(ctx context.Context, q store.Querier) (map[int64]LocalNames, error) {
	type row struct {
		uid   int64
		names string
	}
	rows, err := store.Collect(ctx, q, func(sc store.Scanner) (row, error) {
		var r row
		return r, sc.Scan(&r.uid, &r.names)
	}, "SELECT uid, names FROM skills WHERE names <> ''")
	if err != nil {
		return nil, fmt.Errorf("skill names: %w", err)
	}
	out := make(map[int64]LocalNames, len(rows))
	for _, r := range rows {
		n, err := decodeNames(r.names)
		if err != nil {
			return nil, fmt.Errorf("names of skill %d: %w", r.uid, err)
		}
		out[r.uid] = n
	}
	return out, nil
}

// SetLocalNamesTx stores the names of skill uid when they differ from the
// stored ones; nil or empty removes them. The caller checked them.
func SetLocalNamesTx(ctx context.Context, tx *store.Tx, uid int64, n LocalNames) error {
	old, err := localNamesOf(ctx, tx, uid)
	if err != nil {
		return err
	}
	if maps.Equal(old, n) {
		return nil
	}
	if _, err := tx.Exec(ctx, "UPDATE skills SET names = ? WHERE uid = ?", encodeNames(n), uid); err != nil {
		return fmt.Errorf("store names of skill %d: %w", uid, err)
	}
	return nil
}
