package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// apiDo sends one request to the server at base as the holder of token and
// decodes the JSON answer into out (when not nil).
func apiDo(t *testing.T, base, token, method, path string, body any, want int, out any) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := apiClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, raw.String(), want)
	}
	if out != nil {
		if err := json.Unmarshal(raw.Bytes(), out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw.String())
		}
	}
}

// `waymark serve --typo3` writes an approved card back into TYPO3: on the
// demo TYPO3 database (`waymark typo3 demo`) with Waymark's part of the
// demo imported, erika's tour on page 2 shows its card with the value TYPO3
// holds, and the applied answer lands in TYPO3's pages row with a
// sys_history update row by erika and a sys_log entry — through the one
// TYPO3 connection --typo3 opens.
func TestServeBesideTYPO3WritesAnApprovedCardBackIntoTYPO3(t *testing.T) {
	eachTYPO3DB(t, func(t *testing.T, dsn string, t3 *sql.DB) { writesBack(t, dsn, t3, false) })
}

// The same with the turns worked by a `waymark worker --typo3` process
// beside `serve --typo3 --workers 0`: the worker writes the card back.
func TestWorkerBesideTYPO3WritesAnApprovedCardBackIntoTYPO3(t *testing.T) {
	eachTYPO3DB(t, func(t *testing.T, dsn string, t3 *sql.DB) { writesBack(t, dsn, t3, true) })
}

func writesBack(t *testing.T, dsn string, t3 *sql.DB, worker bool) {
	{
		sites := filepath.Join(t.TempDir(), "sites")
		if code, out, stderr := cli(t, "typo3", "demo", "--typo3", dsn, "--typo3-sites", sites); code != 0 {
			t.Fatalf("typo3 demo = %d\n%s%s", code, out, stderr)
		}
		dbURL := "sqlite:" + filepath.Join(t.TempDir(), "waymark.db")
		part := filepath.Join(filepath.Dir(sites), "waymark-demo.json")
		if code, out, stderr := cli(t, "import", "--db", dbURL, "--typo3", dsn, "--typo3-sites", sites, part); code != 0 {
			t.Fatalf("import of Waymark's part = %d %s%s", code, out, stderr)
		}
		var before string
		if err := t3.QueryRow("SELECT description FROM pages WHERE uid = 2").Scan(&before); err != nil {
			t.Fatal(err)
		}
		workers := "1"
		if worker {
			workers = "0"
			startCommand(t, "waymark worker running", "worker", "--db", dbURL, "--typo3", dsn, "--typo3-sites", sites, "--workers", "1")
		}
		base, stop := startServe(t, "--db", dbURL, "--typo3", dsn, "--typo3-sites", sites, "--workers", workers)
		defer stop()
		const erika = "demo-token-erika"
		var conv struct {
			ID int64 `json:"id"`
		}
		apiDo(t, base, erika, "POST", "/api/conversations", map[string]any{"page": 2, "language": 0, "skill": 1}, 201, &conv)
		path := fmt.Sprintf("/api/conversations/%d", conv.ID)
		apiDo(t, base, erika, "POST", path+"/messages", map[string]any{"content": "Los geht's"}, 202, nil)
		type view struct {
			Status string `json:"status"`
			Card   *struct {
				TurnDigest string `json:"turnDigest"`
				Calls      []struct {
					Preview []struct {
						Field    string `json:"field"`
						Current  string `json:"current"`
						Proposed string `json:"proposed"`
					} `json:"preview"`
				} `json:"calls"`
			} `json:"card"`
		}
		settle := func() view {
			deadline := time.Now().Add(30 * time.Second)
			for {
				var v view
				apiDo(t, base, erika, "GET", path, nil, 200, &v)
				if v.Status != "processing" || time.Now().After(deadline) {
					return v
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		v := settle()
		if v.Status != "awaiting_approval" || v.Card == nil || len(v.Card.Calls) == 0 || len(v.Card.Calls[0].Preview) == 0 {
			t.Fatalf("no card: %+v", v)
		}
		item := v.Card.Calls[0].Preview[0]
		if item.Field != "description" || item.Current != before {
			t.Fatalf("the card shows %s = %q, want TYPO3's description %q", item.Field, item.Current, before)
		}
		apiDo(t, base, erika, "POST", path+"/answer", map[string]any{"turnDigest": v.Card.TurnDigest, "answer": "apply"}, 202, nil)
		settle()
		var got string
		if err := t3.QueryRow("SELECT description FROM pages WHERE uid = 2").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != item.Proposed {
			t.Errorf("TYPO3 pages:2 description = %q, want the applied %q", got, item.Proposed)
		}
		var hist, logs int
		if err := t3.QueryRow("SELECT COUNT(*) FROM sys_history WHERE tablename = 'pages' AND recuid = 2 AND actiontype = 2 AND userid = 2").Scan(&hist); err != nil {
			t.Fatal(err)
		}
		if err := t3.QueryRow("SELECT COUNT(*) FROM sys_log WHERE tablename = 'pages' AND recuid = 2 AND userid = 2").Scan(&logs); err != nil {
			t.Fatal(err)
		}
		if hist != 1 || logs != 1 {
			t.Errorf("sys_history update rows = %d, sys_log entries = %d of pages:2 by erika, want 1 and 1", hist, logs)
		}
		stop()
		if n := countRows(t, dbURL[len("sqlite:"):], "record_history") + countRows(t, dbURL[len("sqlite:"):], "records"); n != 0 {
			t.Errorf("Waymark kept %d rows of the record or its history: the records are TYPO3's", n)
		}
	}
}
