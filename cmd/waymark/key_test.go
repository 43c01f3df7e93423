package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"waymark/internal/store/storetest"
)

// keyFixture is a site with a configuration whose provider key is sealed.
const keyFixture = "languages: [{uid: 0, title: English, locale: en}]\n" +
	"groups: [{uid: 1, title: Editors, tablesSelect: [pages], tablesModify: [pages], nonExcludeFields: [], languages: [0], mounts: [1], subgroups: []}]\n" +
	"pages: [{uid: 1, pid: 0, title: Home, language: 0, owner: 0, group: 1, perms: {user: 31, group: 27, everybody: 0}, fields: {}}]\n" +
	"configurations: [{uid: 1, identifier: chat, name: Chat, active: true, groups: [1], provider: {type: openai, baseUrl: 'http://127.0.0.1:9/v1', apiKey: sk-sealed, model: m}, contextWindow: 32000, privacy: metadata}]\n"

func writeFixture(t *testing.T) string {
	t.Helper()
	fx := filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(fx, []byte(keyFixture), 0o600); err != nil {
		t.Fatal(err)
	}
	return fx
}

func firstLine(s string) string { return strings.SplitN(strings.TrimSpace(s), "\n", 2)[0] }

// With SQLite the key lives beside the database file
// whatever the working directory; generating it is logged once.
func TestKeyLivesBesideTheSQLiteFileWhateverTheWorkingDirectory(t *testing.T) {
	t.Setenv("WAYMARK_SECRET_KEY", "")
	t.Setenv("WAYMARK_DATA_DIR", "")
	dataDir, elsewhere := t.TempDir(), t.TempDir()
	fx := writeFixture(t)
	t.Chdir(dataDir)
	code, _, stderr := cli(t, "import", "--db", "sqlite:w.db", fx)
	if code != 0 {
		t.Fatalf("first import = %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "generated a new secret key") || !strings.Contains(stderr, filepath.Join(dataDir, "secret.key")) {
		t.Errorf("first import logged %q, want the generation of %s", stderr, filepath.Join(dataDir, "secret.key"))
	}
	t.Chdir(elsewhere)
	code, _, stderr = cli(t, "import", "--db", "sqlite:"+filepath.Join(dataDir, "w.db"), fx)
	if code != 0 {
		t.Fatalf("import from another working directory = %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "generated") {
		t.Errorf("import from another working directory generated a key: %s", stderr)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "secret.key")); err == nil {
		t.Error("a secret.key appeared in the working directory")
	}
}

// On PostgreSQL there is no file to put the key beside:
// without --data-dir, WAYMARK_DATA_DIR or WAYMARK_SECRET_KEY the command
// refuses with one line naming them, and writes no key anywhere.
func TestPostgresNeedsADataDirOrAKey(t *testing.T) {
	url := storetest.PostgresURL(t)
	t.Setenv("WAYMARK_SECRET_KEY", "")
	t.Setenv("WAYMARK_DATA_DIR", "")
	wd := t.TempDir()
	t.Chdir(wd)
	code, _, stderr := cli(t, "import", "--db", url, writeFixture(t))
	line := firstLine(stderr)
	if code == 0 || !strings.Contains(line, "--data-dir") || !strings.Contains(line, "WAYMARK_SECRET_KEY") {
		t.Errorf("import on PostgreSQL without a key = %d, %q; want one line naming --data-dir and WAYMARK_SECRET_KEY", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "secret.key")); err == nil {
		t.Error("a secret.key appeared in the working directory")
	}
}

// The database keeps a check value of its key; a process
// with another key refuses to start with one line naming the fix, and
// changes nothing.
func TestAnotherKeyRefusesToStart(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			db := "sqlite:" + filepath.Join(t.TempDir(), "w.db")
			if dialect == "postgres" {
				db = storetest.PostgresURL(t)
			}
			fx := writeFixture(t)
			t.Setenv("WAYMARK_SECRET_KEY", strings.Repeat("a", 64))
			if code, _, stderr := cli(t, "import", "--db", db, fx); code != 0 {
				t.Fatalf("import with key A = %d: %s", code, stderr)
			}
			t.Setenv("WAYMARK_SECRET_KEY", strings.Repeat("b", 64))
			code, _, stderr := cli(t, "import", "--db", db, fx)
			line := firstLine(stderr)
			if code == 0 || !strings.Contains(line, "does not open") || !strings.Contains(line, "WAYMARK_SECRET_KEY") {
				t.Errorf("import with key B = %d, %q; want one line saying the key does not open the database and naming the fix", code, stderr)
			}
			t.Setenv("WAYMARK_SECRET_KEY", strings.Repeat("a", 64))
			if code, _, stderr := cli(t, "import", "--db", db, fx); code != 0 {
				t.Errorf("import with key A again = %d: %s", code, stderr)
			}
		})
	}
}

// The SQLite database and the generated key are created 0600.
func TestDatabaseAndKeyFilesArePrivate(t *testing.T) {
	t.Setenv("WAYMARK_SECRET_KEY", "")
	t.Setenv("WAYMARK_DATA_DIR", "")
	dir := t.TempDir()
	if code, _, stderr := cli(t, "import", "--db", "sqlite:"+filepath.Join(dir, "w.db"), writeFixture(t)); code != 0 {
		t.Fatalf("import = %d: %s", code, stderr)
	}
	for _, name := range []string{"w.db", "secret.key"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, want 0600", name, st.Mode().Perm())
		}
	}
}

// A database copied to a new folder without its secret.key (a restore that
// forgot the key) is refused at start with one line naming the missing file,
// and no new key is written there: one would open nothing in the database.
func TestStartWithoutTheKeyOfASealedDatabaseRefusesAndWritesNoKey(t *testing.T) {
	t.Setenv("WAYMARK_SECRET_KEY", "")
	t.Setenv("WAYMARK_DATA_DIR", "")
	src, dst := t.TempDir(), t.TempDir()
	if code, _, stderr := cli(t, "import", "--db", "sqlite:"+filepath.Join(src, "w.db"), writeFixture(t)); code != 0 {
		t.Fatalf("import = %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(src, "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "w.db"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"import", "--db", "sqlite:" + filepath.Join(dst, "w.db"), writeFixture(t)},
		{"serve", "--db", "sqlite:" + filepath.Join(dst, "w.db"), "--addr", "127.0.0.1:0"},
	} {
		code, _, stderr := cli(t, args...)
		line := firstLine(stderr)
		if code == 0 || !strings.HasPrefix(line, "waymark "+args[0]+": ") || !strings.Contains(line, "the key is missing") ||
			!strings.Contains(line, filepath.Join(dst, "secret.key")) {
			t.Errorf("%s without the key = %d, %q; want one line naming the missing %s", args[0], code, stderr, filepath.Join(dst, "secret.key"))
		}
		if _, err := os.Stat(filepath.Join(dst, "secret.key")); err == nil {
			t.Fatalf("%s wrote a new secret.key beside the copied database", args[0])
		}
	}
}
