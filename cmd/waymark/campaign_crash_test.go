package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"waymark/internal/demo"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// proc is a waymark child process (the test binary as waymark) with its log.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex // guards log
	log  []string
}

// startProc starts waymark with args and waits until it logs the message
// ready; it returns the process and the record of that line. The process
// is killed when the test ends.
func startProc(t *testing.T, ready string, args ...string) (*proc, map[string]any) {
	t.Helper()
	p := &proc{cmd: exec.Command(benchExe, args...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), benchEnv...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan map[string]any, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.log = append(p.log, sc.Text())
			p.mu.Unlock()
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == ready {
				select {
				case found <- rec:
				default:
				}
			}
		}
		_ = p.cmd.Wait()
	}()
	t.Cleanup(func() { p.kill() })
	select {
	case rec := <-found:
		return p, rec
	case <-p.done:
	case <-time.After(2 * time.Minute):
	}
	p.kill()
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Fatalf("waymark %v did not log %q:\n%s", args, ready, strings.Join(p.log, "\n"))
	return nil, nil
}

// kill ends the process with SIGKILL, as a crash would, and waits for it.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// guideBranch is the demo's guide branch cut to its root and its first n pages.
func guideBranch(t *testing.T, n int) []byte {
	t.Helper()
	var b struct {
		Pages   []json.RawMessage `json:"pages"`
		Records []json.RawMessage `json:"records"`
	}
	if err := json.Unmarshal(demo.Branch(demo.DefaultBranchPages), &b); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(map[string]any{"pages": b.Pages[:n+1], "records": b.Records[:n]})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// A campaign over 31 pages of the demo's guide branch on PostgreSQL, with
// `serve --workers 0` and a `worker` process that is killed with SIGKILL
// several times while the campaign starts its tours, and again while a
// bulk apply of every card is written, and started anew each time. At the
// end: the campaign is done with one item per page, each in a final state;
// every page has one tour, which offered its first card once (one run, one
// wait for an answer); each applied card wrote its page once, nothing was
// written without its answer, and every invariant of the stored runs holds.
//
// It takes one to three minutes on an idle machine (the reaper hands a
// campaign whose job died with its worker to a new job after 30 s, once per
// kill; a kill between a page's claim and its tour's start waits the 2 min a
// claim takes to go stale), more on a loaded one: skipped with -short.
func TestACampaignSurvivesKill9OfItsWorkerAndStartsAndWritesEveryPageOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts processes for one to three minutes")
	}
	const pages, kills = 30, 3
	started := time.Now()
	ctx := context.Background()
	dbURL, dir := storetest.PostgresURL(t), t.TempDir()
	t.Setenv("WAYMARK_SECRET_KEY", hex.EncodeToString([]byte(strings.Repeat("k", 32))))
	site, branch := filepath.Join(dir, "site.yaml"), filepath.Join(dir, "branch.json")
	if err := os.WriteFile(site, demo.Fixture, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(branch, guideBranch(t, pages), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cli(t, "import", "--db", dbURL, site, branch); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lease := []string{"--lease", "5s"}
	_, rec := startProc(t, "waymark serving", append([]string{"serve", "--db", dbURL, "--workers", "0", "--addr", "127.0.0.1:0"}, lease...)...)
	base, _ := rec["url"].(string)
	if base == "" {
		t.Fatalf("serve logged no URL: %v", rec)
	}
	startWorker := func() *proc {
		w, _ := startProc(t, "waymark worker running", append([]string{"worker", "--db", dbURL, "--workers", "4"}, lease...)...)
		return w
	}
	worker := startWorker()
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	// killAtRandom kills the worker n times, each a random moment within the
	// next within milliseconds after the new one is up, and starts a new one;
	// it logs what was under way at each kill.
	kill := 0
	killAtRandom := func(n, within int, what string) {
		for range n {
			kill++
			time.Sleep(time.Duration(rand.IntN(within)) * time.Millisecond)
			worker.kill()
			t.Logf("kill %d of the worker %s (%v in): %d pages pending, %d running, %d fields written", kill, what,
				time.Since(started).Round(time.Millisecond), count("SELECT COUNT(*) FROM campaign_items WHERE state = 'pending'"),
				count("SELECT COUNT(*) FROM campaign_items WHERE state = 'running'"), count("SELECT COUNT(*) FROM record_history"))
			worker = startWorker()
		}
	}
	const erika = "demo-token-erika"
	type campaign struct {
		ID     int64  `json:"id"`
		State  string `json:"state"`
		Counts struct {
			Total, Pending, Running, Proposals, Skipped, Failed, Done int
		} `json:"counts"`
	}
	var v campaign
	apiDo(t, base, erika, "POST", "/api/campaigns", map[string]any{"process": "seo-optimieren", "rootPage": demo.BranchRoot, "depth": 1, "concurrency": 4}, 201, &v)
	if v.Counts.Total != pages+1 {
		t.Fatalf("created: %+v, want %d pages", v, pages+1)
	}
	path := fmt.Sprintf("/api/campaigns/%d", v.ID)
	// Spread over the campaign: before its first card, once a third and
	// once two thirds of its pages waited at their first card.
	for i := range kills {
		for deadline := time.Now().Add(3 * time.Minute); count("SELECT COUNT(*) FROM campaign_items WHERE campaign_id = ? AND state <> 'pending' AND state <> 'running'", v.ID) < i*(pages+1)/kills; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the campaign stalled before kill %d", i+1)
			}
		}
		killAtRandom(1, 1500, "while the campaign starts its tours")
	}
	for deadline := time.Now().Add(5 * time.Minute); v.State != "done"; time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the campaign never finished: %+v", v)
		}
		apiDo(t, base, erika, "GET", path, nil, 200, &v)
	}
	t.Logf("campaign done after %v: %+v", time.Since(started).Round(time.Millisecond), v.Counts)
	if v.Counts.Failed+v.Counts.Skipped+v.Counts.Pending+v.Counts.Running != 0 || v.Counts.Proposals+v.Counts.Done != pages+1 {
		t.Errorf("counts: %+v, want every page worked", v.Counts)
	}
	// One item per page, each in a final state, with its tour; one tour per page.
	if n := count("SELECT COUNT(DISTINCT page_uid) FROM campaign_items WHERE campaign_id = ? AND state IN ('proposals', 'done') AND conversation_id > 0", v.ID); n != pages+1 {
		t.Errorf("pages whose tour ended at a card or its end: %d, want %d", n, pages+1)
	}
	if n := count("SELECT COUNT(*) FROM conversations"); n != pages+1 {
		t.Errorf("tours: %d, want one per page (%d)", n, pages+1)
	}
	if n := count(`SELECT COUNT(*) FROM conversations c WHERE NOT EXISTS (SELECT 1 FROM campaign_items i WHERE i.conversation_id = c.id AND i.page_uid = c.page_uid)`); n != 0 {
		t.Errorf("%d tours are no item's", n)
	}
	// Each tour's first turn is one run that waited for an answer once: no card twice.
	if n := count(`SELECT COUNT(*) FROM conversations c WHERE (SELECT COUNT(*) FROM runs r WHERE r.uuid IN (c.last_run_uuid, c.pending_run_uuid)) = 0`); n != 0 {
		t.Errorf("%d tours have no run", n)
	}
	waited := `SELECT run_uuid FROM run_events WHERE kind = 'status' AND payload LIKE '%"waiting_for_approval"%' GROUP BY run_uuid`
	if n := count(`SELECT COUNT(*) FROM (` + waited + `) w`); n != v.Counts.Proposals {
		t.Errorf("%d runs waited for an answer, want one per page with proposals (%d)", n, v.Counts.Proposals)
	}
	if n := count(`SELECT COUNT(*) FROM (` + waited + ` HAVING COUNT(*) > 1) twice`); n != 0 {
		t.Errorf("%d runs offered their card more than once", n)
	}
	if n := count("SELECT COUNT(*) FROM record_history"); n != 0 {
		t.Fatalf("%d fields written before any answer", n)
	}

	// Every card applied in one bulk answer, the worker killed while they are written.
	var cards struct {
		Cards []struct {
			Conversation int64  `json:"conversation"`
			TurnDigest   string `json:"turnDigest"`
			Page         int64  `json:"page"`
			Fields       []struct {
				Field    string `json:"field"`
				Proposed string `json:"proposed"`
			} `json:"fields"`
		} `json:"cards"`
	}
	apiDo(t, base, erika, "GET", path+"/cards?limit=200", nil, 200, &cards)
	if len(cards.Cards) != v.Counts.Proposals || len(cards.Cards) < pages {
		t.Fatalf("%d cards, want one per page with proposals (%d)", len(cards.Cards), v.Counts.Proposals)
	}
	var refs []map[string]any
	want := map[int64][2]string{} // page → field and value applied
	for _, c := range cards.Cards {
		refs = append(refs, map[string]any{"conversation": c.Conversation, "turnDigest": c.TurnDigest})
		want[c.Page] = [2]string{c.Fields[0].Field, c.Fields[0].Proposed}
	}
	var res struct {
		Results []struct{ Outcome string } `json:"results"`
	}
	apiDo(t, base, erika, "POST", path+"/answers", map[string]any{"answer": "apply", "cards": refs}, 200, &res)
	for i, r := range res.Results {
		if r.Outcome != "answered" {
			t.Errorf("card of page %d: %s, want answered", cards.Cards[i].Page, r.Outcome)
		}
	}
	killAtRandom(1, 400, "while the answers are written")
	for deadline := time.Now().Add(3 * time.Minute); count("SELECT COUNT(DISTINCT tbl || uid || field) FROM record_history") < len(want); time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("written: %d of %d answered cards", count("SELECT COUNT(DISTINCT tbl || uid || field) FROM record_history"), len(want))
		}
	}
	// Each answered card wrote its page once, with the proposed value; nothing else was written.
	rows, err := store.Collect(ctx, db, func(sc store.Scanner) ([3]string, error) {
		var r [3]string
		var uid int64
		err := sc.Scan(&uid, &r[1], &r[2])
		r[0] = fmt.Sprint(uid)
		return r, err
	}, "SELECT uid, field, new_value FROM record_history WHERE tbl = 'pages' ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range rows {
		seen[r[0]+"."+r[1]]++
		var uid int64
		fmt.Sscan(r[0], &uid)
		if w, ok := want[uid]; !ok || w[0] != r[1] || w[1] != r[2] {
			t.Errorf("pages:%s.%s = %q written, want only the answered %v", r[0], r[1], r[2], w)
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s written %d times", k, n)
		}
	}
	if n := count("SELECT COUNT(*) FROM record_history WHERE tbl <> 'pages'"); n != 0 {
		t.Errorf("%d content fields written without an answer", n)
	}
	quiesceCampaign(t, db)
	wantInvariants(t, db)
	t.Logf("%d pages, %d kills, %d writes in %v", pages+1, kills+1, len(rows), time.Since(started).Round(time.Second))
}

// quiesceCampaign waits until no run is queued or running and no chat job
// waits (the tours go on to their next card after the answers).
func quiesceCampaign(t *testing.T, db *store.DB) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
		var runs, jobs int
		if err := db.QueryRow(t.Context(), "SELECT COUNT(*) FROM runs WHERE status IN ('queued', 'running')").Scan(&runs); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow(t.Context(), `SELECT COUNT(*) FROM river_job WHERE kind IN ('waymark_run', 'waymark_chat')
			AND state IN ('available', 'scheduled', 'retryable', 'pending', 'running')`).Scan(&jobs); err != nil {
			t.Fatal(err)
		}
		if runs+jobs == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d runs and %d jobs under way", runs, jobs)
		}
	}
}
