package main

import (
	"database/sql"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tableList is every table of db's current database or schema, sorted.
func tableList(t *testing.T, db *sql.DB) []string {
	t.Helper()
	q := "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
	if err := db.QueryRow("SELECT DATABASE()").Err(); err != nil { // PostgreSQL
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// bench --typo3 runs the card-answer drive on the built-in source and
// beside TYPO3 (its generated site as TYPO3 rows in an empty database) and
// prints both figures side by side with their ratio; the TYPO3 run's
// approved cards were written into TYPO3 (sys_history).
func TestBenchBesideTYPO3PrintsBothCardAnswerRatesSideBySide(t *testing.T) {
	eachTYPO3DB(t, func(t *testing.T, dsn string, db *sql.DB) {
		code, stdout, stderr := cli(t, "bench", "--typo3", dsn, "--duration", "2s", "--conversations", "2")
		if code != 0 {
			t.Fatalf("bench --typo3 exited %d: %s", code, stderr)
		}
		var builtin, typo3, ratio float64
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) >= 3 && f[0] == "card_answers/s":
				builtin, _ = strconv.ParseFloat(f[1], 64)
				typo3, _ = strconv.ParseFloat(f[2], 64)
			case strings.HasPrefix(line, "typo3/built-in card_answers/s: "):
				ratio, _ = strconv.ParseFloat(f[len(f)-1], 64)
			}
		}
		if builtin <= 0 || typo3 <= 0 || ratio <= 0 {
			t.Fatalf("card_answers/s built-in %v, typo3 %v, ratio %v: want all > 0 in\n%s", builtin, typo3, ratio, stdout)
		}
		var written int
		if err := db.QueryRow("SELECT COUNT(*) FROM sys_history").Scan(&written); err != nil {
			t.Fatal(err)
		}
		if written == 0 {
			t.Errorf("no sys_history row in the TYPO3 database: the TYPO3 run wrote nothing into TYPO3")
		}
		t.Logf("\n%s", stdout)
	})
}

// A TYPO3 database that holds anything (here a table of its own with a
// row) may be a real installation: bench --typo3 refuses it with one line
// and changes nothing, neither there nor in the sites folder.
func TestBenchRefusesATYPO3DatabaseWithForeignDataAndChangesNothing(t *testing.T) {
	eachTYPO3DB(t, func(t *testing.T, dsn string, db *sql.DB) {
		if _, err := db.Exec("CREATE TABLE their_things (id INT NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("INSERT INTO their_things (id) VALUES (7)"); err != nil {
			t.Fatal(err)
		}
		before := tableList(t, db)
		sites := t.TempDir()
		code, stdout, stderr := cli(t, "bench", "--typo3", dsn, "--typo3-sites", sites, "--duration", "1s", "--conversations", "1")
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 1 || stdout != "" || len(lines) != 1 || !strings.Contains(stderr, "their_things") || !strings.Contains(stderr, "bench did not make") {
			t.Errorf("bench --typo3 on a database with a table = exit %d, stdout %q, stderr %q; want 1 and one line refusing it", code, stdout, stderr)
		}
		if after := tableList(t, db); !slices.Equal(after, before) {
			t.Errorf("tables after the refusal %v, before %v", after, before)
		}
		var n, id int
		if err := db.QueryRow("SELECT COUNT(*), MIN(id) FROM their_things").Scan(&n, &id); err != nil || n != 1 || id != 7 {
			t.Errorf("their_things after the refusal: %d rows, id %d, err %v; want the one row 7", n, id, err)
		}
		if entries, _ := os.ReadDir(sites); len(entries) != 0 {
			t.Errorf("the sites folder got %d entries", len(entries))
		}
	})
}

// The sites folder is where bench --typo3 writes its own site
// configuration: one that holds anything (an installation's config/sites)
// is refused before the TYPO3 database is opened, and left as it was.
func TestBenchRefusesATYPO3SitesFolderThatIsNotEmpty(t *testing.T) {
	sites := t.TempDir()
	if err := os.WriteFile(sites+"/keep.txt", []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, "bench", "--typo3", "mysql://root@127.0.0.1:1/t3", "--typo3-sites", sites, "--duration", "1s")
	if code != 1 || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "is not empty") {
		t.Errorf("bench --typo3-sites with a file = exit %d, stdout %q, stderr %q; want 1 and one line", code, stdout, stderr)
	}
	if entries, _ := os.ReadDir(sites); len(entries) != 1 {
		t.Errorf("the sites folder has %d entries, want its one file", len(entries))
	}
}
