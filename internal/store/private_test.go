package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"waymark/internal/store"
)

// A new SQLite database, its WAL and its shared-memory
// file are created 0600.
func TestSQLiteFilesAreCreatedPrivate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := store.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, want 0600", filepath.Base(f), st.Mode().Perm())
		}
	}
}
