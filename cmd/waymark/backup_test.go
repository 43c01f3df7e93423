package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waymark/internal/bench"
	"waymark/internal/invariant"
	"waymark/internal/store"
)

// sealedInstall is a SQLite installation in a folder of its own whose
// configuration holds a provider key sealed with the secret.key generated
// beside the database.
func sealedInstall(t *testing.T) (dir, url string) {
	t.Helper()
	t.Setenv("WAYMARK_SECRET_KEY", "")
	t.Setenv("WAYMARK_DATA_DIR", "")
	dir = t.TempDir()
	url = "sqlite:" + filepath.Join(dir, "w.db")
	if code, _, stderr := cli(t, "import", "--db", url, writeFixture(t)); code != 0 {
		t.Fatalf("import = %d: %s", code, stderr)
	}
	return dir, url
}

// entries lists a folder's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// withoutKey rewrites the archive at from as one without its secret.key
// (its manifest no longer lists one), as a copy made by hand might be.
func withoutKey(t *testing.T, from string) string {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	db := filepath.Join(t.TempDir(), "db")
	m, key, err := readArchive(in, db)
	if err != nil || key == nil {
		t.Fatalf("read %s: key %v, %v", from, key != nil, err)
	}
	out := filepath.Join(t.TempDir(), "nokey.tar.gz")
	var buf bytes.Buffer
	if err := writeArchive(&buf, m, db, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// Bad input to backup and restore gets one line and writes nothing: no
// archive, no database, no key, the existing database unchanged.
func TestBackupAndRestoreRefuseBadInputWithOneLineAndWriteNothing(t *testing.T) {
	src, url := sealedInstall(t)
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	if code, stdout, stderr := cli(t, "backup", "--db", url, "--to", archive); code != 0 || !strings.Contains(stdout, "secret key from "+filepath.Join(src, "secret.key")+" included") {
		t.Fatalf("backup = %d, %q, %q", code, stdout, stderr)
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(t.TempDir(), "damaged.tar.gz")
	flipped := bytes.Clone(data)
	flipped[len(flipped)/2] ^= 0xff
	if err := os.WriteFile(damaged, flipped, 0o600); err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.tar.gz")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o600); err != nil {
		t.Fatal(err)
	}
	noKey := withoutKey(t, archive)
	aFile := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(aFile, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	srcDB, err := os.ReadFile(filepath.Join(src, "w.db"))
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		env  string // WAYMARK_SECRET_KEY
		args func(out string) []string
		want string
		code int
	}{
		{"backup without --to", "", func(string) []string { return []string{"backup", "--db", url} }, "--to FILE is required", 2},
		{"backup to an unwritable place", "", func(string) []string {
			return []string{"backup", "--db", url, "--to", filepath.Join(aFile, "b.tar.gz")}
		}, "cannot write beside", 1},
		{"backup over an existing file", "", func(string) []string { return []string{"backup", "--db", url, "--to", archive} }, "exists: backup writes a new file", 1},
		{"backup of a missing database", "", func(out string) []string {
			return []string{"backup", "--db", "sqlite:" + filepath.Join(out, "none.db"), "--to", filepath.Join(out, "b.tar.gz")}
		}, "no database at", 1},
		{"backup of PostgreSQL", "", func(out string) []string {
			return []string{"backup", "--db", "postgres://u@127.0.0.1:1/x", "--to", filepath.Join(out, "b.tar.gz")}
		}, "pg_dump --format=custom", 1},
		{"restore without --from", "", func(out string) []string { return []string{"restore", "--db", "sqlite:" + filepath.Join(out, "w.db")} }, "--from FILE is required", 2},
		{"restore onto a database with data", "", func(string) []string { return []string{"restore", "--from", archive, "--db", url} }, "exists and holds data", 1},
		{"restore of an archive without its key", "", func(out string) []string {
			return []string{"restore", "--from", noKey, "--db", "sqlite:" + filepath.Join(out, "w.db")}
		}, "holds no secret key and none is given", 1},
		{"restore of a damaged archive", "", func(out string) []string {
			return []string{"restore", "--from", damaged, "--db", "sqlite:" + filepath.Join(out, "w.db")}
		}, "is not a complete waymark backup", 1},
		{"restore of a cut archive", "", func(out string) []string {
			return []string{"restore", "--from", cut, "--db", "sqlite:" + filepath.Join(out, "w.db")}
		}, "is not a complete waymark backup", 1},
		{"restore of a file that is no archive", "", func(out string) []string {
			return []string{"restore", "--from", aFile, "--db", "sqlite:" + filepath.Join(out, "w.db")}
		}, "is not a complete waymark backup", 1},
		{"restore with another key set", strings.Repeat("b", 64), func(out string) []string {
			return []string{"restore", "--from", archive, "--db", "sqlite:" + filepath.Join(out, "w.db")}
		}, "WAYMARK_SECRET_KEY is set to another key", 1},
		{"restore without its key and another set", strings.Repeat("b", 64), func(out string) []string {
			return []string{"restore", "--from", noKey, "--db", "sqlite:" + filepath.Join(out, "w.db")}
		}, "secret key does not open this database", 1},
		{"restore onto PostgreSQL", "", func(string) []string {
			return []string{"restore", "--from", archive, "--db", "postgres://u@127.0.0.1:1/x"}
		}, "pg_restore --dbname", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("WAYMARK_SECRET_KEY", c.env)
			out := t.TempDir()
			code, _, stderr := cli(t, c.args(out)...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != c.code || !strings.Contains(lines[0], c.want) || !strings.HasPrefix(lines[0], "waymark ") ||
				len(lines) > 2 || len(lines) == 2 && !strings.HasPrefix(lines[1], "usage: ") {
				t.Errorf("exit %d, stderr %q; want exit %d and one line with %q", code, stderr, c.code, c.want)
			}
			if got := entries(t, out); len(got) > 0 {
				t.Errorf("wrote %v", got)
			}
		})
	}
	if got, err := os.ReadFile(filepath.Join(src, "w.db")); err != nil || !bytes.Equal(got, srcDB) {
		t.Errorf("the installation's database changed (%v)", err)
	}
	if got := entries(t, filepath.Dir(archive)); !slices.Equal(got, []string{"b.tar.gz"}) {
		t.Errorf("beside the archive: %v", got)
	}
	if got := entries(t, filepath.Dir(aFile)); !slices.Equal(got, []string{"file"}) {
		t.Errorf("beside the unwritable target: %v", got)
	}
}

// startServe runs waymark serve with args in this process until it logs
// its URL (the JSON record "waymark serving"), and returns the URL and a
// function that stops it.
func startServe(t *testing.T, args ...string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var errb bytes.Buffer
	go func() {
		done <- runCLI(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), io.Discard, pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	url := ""
	for url == "" && sc.Scan() {
		errb.Write(sc.Bytes())
		errb.WriteByte('\n')
		var rec struct{ Msg, URL string }
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "waymark serving" {
			url = rec.URL
		}
	}
	go io.Copy(io.Discard, pr)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Error("serve did not stop")
			}
		})
	}
	t.Cleanup(stop)
	if url == "" {
		stop()
		t.Fatalf("serve %v printed no URL: %s", args, errb.String())
	}
	return url, stop
}

// apiClient bounds every request of the backup proof, so that a server
// that stops answering fails the test instead of hanging it.
var apiClient = &http.Client{Timeout: 30 * time.Second}

// listed is one editor's conversations as GET /api/conversations answers
// them, by id, each as raw JSON and its updatedAt.
type listed map[int64]struct {
	raw     string
	updated time.Time
}

// listAll reads every editor's conversation list from the server at base.
func listAll(t *testing.T, base string, tokens []string) listed {
	t.Helper()
	all := listed{}
	for _, tok := range tokens {
		req, _ := http.NewRequest("GET", base+"/api/conversations", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := apiClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Conversations []json.RawMessage `json:"conversations"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/conversations = %d, %v", resp.StatusCode, err)
		}
		for _, raw := range body.Conversations {
			var v struct {
				ID        int64     `json:"id"`
				UpdatedAt time.Time `json:"updatedAt"`
			}
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			all[v.ID] = struct {
				raw     string
				updated time.Time
			}{string(raw), v.UpdatedAt}
		}
	}
	return all
}

// getCard reads one conversation as its owner and returns its card as JSON
// ("null" without one).
func getCard(t *testing.T, base, tok string, id int64) string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/conversations/"+strconv.FormatInt(id, 10), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := apiClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Card json.RawMessage `json:"card"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET conversation %d = %d, %v", id, resp.StatusCode, err)
	}
	return string(v.Card)
}

// Backup and restore: a backup taken while serve answers cards of many
// guided conversations restores into a new folder, and a serve started on
// the restored copy (with its key from the archive) serves every
// conversation the installation had when the backup began and none begun
// after it ended; each conversation that did not change while the backup
// ran is served exactly as before (its list entry, its current card), and
// the others as they were at a moment within the backup; every invariant
// of the load proof holds on the copy; the load was not disturbed.
func TestBackupUnderLoadRestoresEveryConversationAndCard(t *testing.T) {
	t.Setenv("WAYMARK_SECRET_KEY", "")
	t.Setenv("WAYMARK_DATA_DIR", "")
	n, lease := 12, loadLease
	if proofFull() {
		// At this size on the loaded machine a heartbeat can come later
		// than a lease of 5 s: the reaper would end turns the load needs.
		n, lease = 100, 30*time.Second
	}
	src, dst := t.TempDir(), t.TempDir()
	srcURL := "sqlite:" + filepath.Join(src, "w.db")
	c, err := bench.Start(t.Context(), bench.Config{DB: srcURL, DataDir: src, Conversations: n, Duration: time.Minute,
		Lease: lease, Exe: benchExe, Env: benchEnv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	// Tokens of the editors' own, issued through the command line.
	tokens := make([]string, n)
	for i := range n {
		code, stdout, stderr := cli(t, "token", "--db", srcURL, "bench-editor-"+strconv.Itoa(i))
		if code != 0 {
			t.Fatalf("token: %s", stderr)
		}
		tokens[i] = strings.TrimSpace(stdout)
	}

	var answers atomic.Int64
	stop := make(chan struct{})
	var res bench.Result
	var wg sync.WaitGroup
	wg.Go(func() {
		res = c.Drive(t.Context(), 2*time.Minute, bench.Mix{End: 0.1, Withdraw: 0.1, Stop: stop,
			OnAnswer: func(string) { answers.Add(1) }})
	})
	stopped := false
	stopLoad := func() {
		if !stopped {
			stopped = true
			close(stop)
			wg.Wait()
		}
	}
	defer stopLoad()
	deadline := time.Now().Add(time.Minute)
	for answers.Load() < int64(3*n) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // polling a condition, not a synchronisation
	}
	before := listAll(t, c.URL, tokens)
	answersBefore := answers.Load()
	archive := filepath.Join(t.TempDir(), "backup.tar.gz")
	dbSize, err := os.Stat(filepath.Join(src, "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, stdout, stderr := cli(t, "backup", "--db", srcURL, "--to", archive)
	took := time.Since(start)
	answersDuring := answers.Load() - answersBefore
	after := listAll(t, c.URL, tokens)
	if code != 0 {
		t.Fatalf("backup under load = %d: %s", code, stderr)
	}
	// Keep the load on a while longer: the backup must not have disturbed it.
	time.Sleep(time.Second) // load after the backup, not a synchronisation
	stopLoad()
	if res.Err != nil || res.Unfinished > 0 {
		t.Fatalf("the load around the backup: %d tours failed, %d unfinished; the first failure: %v", res.Failed, res.Unfinished, res.Err)
	}
	st, err := os.Stat(archive)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d conversations, %d answers in all: backup of a %d-byte database took %v (%d answers accepted meanwhile), archive %d bytes: %s",
		n, res.Answers, dbSize.Size(), took.Round(time.Millisecond), answersDuring, st.Size(), strings.TrimSpace(stdout))
	changed := 0
	for id, a := range after {
		if b, ok := before[id]; !ok || b.raw != a.raw {
			changed++
		}
	}
	if answersDuring == 0 && changed == 0 {
		t.Errorf("no card was answered and no conversation changed while the backup ran: it was not taken under load")
	}

	dstURL := "sqlite:" + filepath.Join(dst, "w.db")
	if code, stdout, stderr := cli(t, "restore", "--from", archive, "--db", dstURL); code != 0 || !strings.Contains(stdout, "key written to "+filepath.Join(dst, "secret.key")) {
		t.Fatalf("restore = %d, %q, %q", code, stdout, stderr)
	}
	restoredDB, err := store.Open(t.Context(), dstURL)
	if err != nil {
		t.Fatal(err)
	}
	defer restoredDB.Close()
	// A copy taken mid-turn holds turns in flight (a run decided whose
	// conversation is not yet told, a lease of the old process): the
	// invariants that hold at every commit must hold on it at once, the
	// others once the restored installation has moved them on (below).
	wantInvariants(t, restoredDB, invariant.WriteOnce, invariant.ApprovedWrite, invariant.Privacy)

	// Without workers nothing moves: the restored serve shows the copy as it is.
	base, stopServe := startServe(t, "--db", dstURL, "--workers", "0")
	got := listAll(t, base, tokens)
	same := 0
	for id, b := range before {
		r, ok := got[id]
		if !ok {
			t.Errorf("conversation %d, there before the backup, is not served after the restore", id)
			continue
		}
		if a, ok := after[id]; ok && a.raw == b.raw {
			same++
			if r.raw != b.raw {
				t.Errorf("conversation %d did not change during the backup, but is restored as\n%s\nnot\n%s", id, r.raw, b.raw)
			}
		}
	}
	for id, r := range got {
		a, ok := after[id]
		if !ok {
			t.Errorf("conversation %d is restored but was not there after the backup", id)
			continue
		}
		if b, ok := before[id]; ok && r.updated.Before(b.updated) || r.updated.After(a.updated) {
			t.Errorf("conversation %d is restored as of %v, outside the backup's time", id, r.updated)
		}
	}
	if same == 0 {
		t.Errorf("no conversation was the same before and after the backup: nothing compared exactly")
	}
	// Each conversation's current card, read as its owner, is the one its list entry shows.
	owner := map[int64]string{}
	for _, tok := range tokens {
		for id := range listAll(t, base, []string{tok}) {
			owner[id] = tok
		}
	}
	cards := 0
	for id, r := range got {
		var v struct {
			Card json.RawMessage `json:"card"`
		}
		if err := json.Unmarshal([]byte(r.raw), &v); err != nil {
			t.Fatal(err)
		}
		card := getCard(t, base, owner[id], id)
		if string(v.Card) != card {
			t.Errorf("conversation %d: card %s, list shows %s", id, card, v.Card)
		}
		if card != "null" {
			cards++
		}
	}
	t.Logf("restored: %d conversations served (%d before the backup, %d after), %d unchanged compared exactly, %d with a card open",
		len(got), len(before), len(after), same, cards)

	// The restored installation works on: with workers, the turns that were
	// in flight at the backup's moment are carried on (a read releases a
	// lost one, the reaper a lease of the old process), and then every
	// invariant of the load proof holds.
	stopServe()
	base, _ = startServe(t, "--db", dstURL, "--workers", "2", "--lease", lease.String())
	deadline = time.Now().Add(2*time.Minute + 2*lease)
	for {
		processing := 0
		for id, tok := range owner {
			req, _ := http.NewRequest("GET", base+"/api/conversations/"+strconv.FormatInt(id, 10), nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := apiClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var v struct {
				Status string `json:"status"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			if v.Status == "processing" {
				processing++
			}
		}
		var runs int
		if err := restoredDB.QueryRow(t.Context(), "SELECT COUNT(*) FROM runs WHERE status IN ('queued', 'running')").Scan(&runs); err != nil {
			t.Fatal(err)
		}
		if processing == 0 && runs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restored installation still has %d conversations processing, %d runs queued or running", processing, runs)
		}
		time.Sleep(200 * time.Millisecond) // polling a condition, not a synchronisation
	}
	wantInvariants(t, restoredDB)
}
