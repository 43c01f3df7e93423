package main

import (
	"path/filepath"
	"strings"
)

// dataDir is where the secret key lives: --data-dir (or its variable), or
// the SQLite file's folder, made absolute so that it does not depend on the
// working directory of later commands. On PostgreSQL
// without either it is "": the key must then come from WAYMARK_SECRET_KEY
// (app.New refuses otherwise, naming the three).
func dataDir(flagValue, dbURL string) string {
	d := flagValue
	if d == "" {
		path, ok := strings.CutPrefix(dbURL, "sqlite:")
		if !ok {
			return ""
		}
		d = filepath.Dir(strings.TrimPrefix(path, "//"))
	}
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}
