package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"waymark/internal/demo"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store/storetest"
	"waymark/internal/typo3"
	"waymark/internal/typo3/bridge"
	"waymark/internal/typo3/live"
	"waymark/internal/typo3/typo3test"
	"waymark/internal/waymarktest"
)

// BenchmarkCardAnswersThroughTheExtension answers one write card per
// iteration through the runs API — the approval, the write, the model's
// closing reply — on the built-in source (the baseline), beside a real
// TYPO3 13.4 on MariaDB with the direct SQL writer, and beside the same
// TYPO3 through the extension (DataHandler as the editor), in one run.
// Beside TYPO3 it reports the statements that reached TYPO3's database per
// answer (MariaDB's Questions: Waymark's reads and the writer's or
// DataHandler's statements alike). Starting the run that shows the card is
// not timed. The "apply" sub-benchmark times the extension's write alone
// (one signed request, DataHandler, commit) and reports its median.
func BenchmarkCardAnswersThroughTheExtension(b *testing.B) {
	answer := func(b *testing.B, env *waymarktest.Env, c *waymarktest.Client, statements func() (int64, int64)) {
		var own, all int64 // statements while answering, not while starting
		count := func(sign int64) {
			if statements != nil {
				w, a := statements()
				own, all = own+sign*w, all+sign*a
			}
		}
		n := 0
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			env.LLM.Add(
				llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c", Name: "update_page_metadata",
					Arguments: fmt.Sprintf(`{"page": 2, "fields": {"description": "About Nordlicht Digital, proposal %d-%d."}}`, time.Now().UnixNano(), i)}}},
				llmtest.Reply{Content: "Done."})
			r := c.Do("POST", "/api/runs", map[string]any{"configuration": 9,
				"messages": []map[string]string{{"role": "user", "content": "Improve the description of page 2"}}})
			var st struct {
				UUID    string `json:"uuid"`
				Pending *struct {
					TurnDigest string `json:"turnDigest"`
				} `json:"pending"`
			}
			if r.Status != 201 || json.Unmarshal(r.Body, &st) != nil || st.Pending == nil {
				b.Fatalf("run %d = %d %s: no card", i, r.Status, r.Body)
			}
			count(-1) // the run's start is not counted
			b.StartTimer()
			r = c.Do("POST", "/api/runs/"+st.UUID+"/approval", map[string]any{"approve": true, "turnDigest": st.Pending.TurnDigest})
			b.StopTimer()
			if r.Status != 200 {
				b.Fatalf("approval %d = %d %s", i, r.Status, r.Body)
			}
			count(+1)
			b.StartTimer()
			n++
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "answers/s")
		if statements != nil {
			b.ReportMetric(float64(own)/float64(n), "waymark-statements/answer")
			// Each count reads Questions with one statement of its own.
			b.ReportMetric(float64(all)/float64(n)-2, "all-statements/answer")
		}
	}
	b.Run("builtin", func(b *testing.B) {
		env := waymarktest.New(b, storetest.SQLite(b), string(demo.Fixture), nil)
		importBenchConfiguration(b, env, 1)
		answer(b, env, env.As("demo-token-erika"), nil)
	})
	r := typo3test.RealMariaDB(b)
	// Waymark reaches TYPO3's database as a user of its own, so MariaDB's
	// user statistics count its statements apart from TYPO3's PHP (root).
	var dbName string
	if err := r.DB.QueryRow("SELECT DATABASE()").Scan(&dbName); err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{"SET GLOBAL userstat = 1", "CREATE USER IF NOT EXISTS 'waymark_bench'@'%' IDENTIFIED BY 'bench'",
		"GRANT ALL ON `" + dbName + "`.* TO 'waymark_bench'@'%'"} {
		if _, err := r.DB.Exec(q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	wdb, _, err := typo3.Open(context.Background(), "mysql://waymark_bench:bench@127.0.0.1:3306/"+dbName)
	if err != nil {
		b.Fatal(err)
	}
	defer wdb.Close()
	// statements counts what reached TYPO3's database: Waymark's user's, and
	// every client's (Questions: TYPO3's PHP and this benchmark's counting too).
	statements := func() (waymark, all int64) {
		var name string
		if err := r.DB.QueryRow("SHOW GLOBAL STATUS LIKE 'Questions'").Scan(&name, &all); err != nil {
			b.Fatal(err)
		}
		_ = r.DB.QueryRow("SELECT SELECT_COMMANDS + UPDATE_COMMANDS + OTHER_COMMANDS FROM INFORMATION_SCHEMA.USER_STATISTICS WHERE USER = 'waymark_bench'").Scan(&waymark)
		return waymark, all
	}
	beside := func(b *testing.B, withBridge bool) (*waymarktest.Env, *waymarktest.Client, int64) {
		ctx := context.Background()
		inst, err := live.New(ctx, wdb, r.Dialect, r.Sites, nil)
		if err != nil {
			b.Fatal(err)
		}
		opts := &waymarktest.Options{TYPO3: inst}
		if withBridge {
			if opts.Bridge, err = bridge.NewClient(r.Base, r.Secret, nil); err != nil {
				b.Fatal(err)
			}
		}
		env := waymarktest.New(b, storetest.SQLite(b), "", opts)
		var editor, group int64
		if err := r.DB.QueryRow("SELECT uid FROM be_users WHERE username = 'editor'").Scan(&editor); err != nil {
			b.Fatal(err)
		}
		if err := r.DB.QueryRow("SELECT uid FROM be_groups WHERE title = 'Editor' AND deleted = 0").Scan(&group); err != nil {
			b.Fatal(err)
		}
		importBenchConfiguration(b, env, group)
		bb := &beside{r: r, env: env, editor: editor, group: group}
		return env, bb.tokenOf(b, editor, "editor"), editor
	}
	b.Run("typo3-direct", func(b *testing.B) {
		env, c, _ := beside(b, false)
		answer(b, env, c, statements)
	})
	b.Run("typo3-extension", func(b *testing.B) {
		env, c, _ := beside(b, true)
		answer(b, env, c, statements)
	})
	b.Run("apply", func(b *testing.B) {
		client, err := bridge.NewClient(r.Base, r.Secret, nil)
		if err != nil {
			b.Fatal(err)
		}
		var editor int64
		if err := r.DB.QueryRow("SELECT uid FROM be_users WHERE username = 'editor'").Scan(&editor); err != nil {
			b.Fatal(err)
		}
		var current string
		if err := r.DB.QueryRow("SELECT description FROM pages WHERE uid = 2").Scan(&current); err != nil {
			b.Fatal(err)
		}
		var times []time.Duration
		for i := 0; b.Loop(); i++ {
			next := fmt.Sprintf("Applied alone, %d-%d.", time.Now().UnixNano(), i)
			t0 := time.Now()
			if _, err := client.Apply(context.Background(), bridge.ApplyRequest{User: editor, Table: "pages", UID: 2,
				Key: "bench/" + next, Fields: map[string]bridge.FieldChange{"description": {Old: current, New: next}}}); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(t0))
			current = next
		}
		slices.Sort(times)
		b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
	})
}

// importBenchConfiguration gives group a configuration (uid 9) on env's scripted model.
func importBenchConfiguration(tb testing.TB, env *waymarktest.Env, group int64) {
	tb.Helper()
	importConfiguration(tb, &beside{env: env, group: group})
}
