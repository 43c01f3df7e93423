package main

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"
)

// dataDir is where the secret key lives: --data-dir, WAYMARK_DATA_DIR, the
// SQLite file's folder, or the working directory.
func dataDir(flagValue, dbURL string) string {
	if d := cmp.Or(flagValue, os.Getenv("WAYMARK_DATA_DIR")); d != "" {
		return d
	}
	if path, ok := strings.CutPrefix(dbURL, "sqlite:"); ok {
		return filepath.Dir(path)
	}
	return "."
}
