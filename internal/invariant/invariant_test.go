package invariant_test

import (
	"context"
	"slices"
	"testing"

	"waymark/internal/invariant"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// A whole guided tour (apply, variant, skip, keep, end) leaves rows that
// break no invariant; then each check sees the state that breaks it, built
// by SQL on top of the tour's rows: every mutation adds violations of its
// check and of no other.
func TestEachInvariantReportsTheStateThatBreaksItAndACleanTourNone(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := wt.New(t, db, wt.TourSite, &wt.Options{Workers: 1})
		e.LLM.Add(wt.TourScript()...)
		at, err := e.As(wt.Erika).Tour()
		if err != nil {
			t.Fatalf("the tour: %v", err)
		}
		e.App.Chat.Wait()
		c := invariant.New(db, nil)
		before, err := c.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(before) != 0 {
			t.Fatalf("a clean tour breaks invariants:%s", invariant.Describe(before))
		}
		// The tour made what the checks look at: a write, an approval, a skip's point.
		for q, want := range map[string]int{
			"SELECT COUNT(*) FROM record_history WHERE run_uuid <> ''":             1,
			"SELECT COUNT(*) FROM open_points WHERE field = 'seoTitle'":            1,
			"SELECT COUNT(*) FROM conversation_outcomes WHERE outcome = 'skipped'": 1,
			"SELECT COUNT(*) FROM run_events WHERE kind = 'tool_write'":            1,
			"SELECT COUNT(*) FROM conversations WHERE status = 'idle'":             1,
		} {
			var n int
			if err := db.QueryRow(ctx, q).Scan(&n); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if n != want {
				t.Fatalf("%s = %d, want %d", q, n, want)
			}
		}
		var tourRun string
		if err := db.QueryRow(ctx, "SELECT run_uuid FROM record_history WHERE run_uuid <> ''").Scan(&tourRun); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name  string
			check string
			sql   []string
		}{
			{"a write call's tool event twice", invariant.WriteOnce, []string{
				`INSERT INTO run_events (run_uuid, sequence, kind, payload, created_at)
					SELECT run_uuid, sequence + 1000, kind, payload, created_at FROM run_events
					WHERE kind = 'tool' AND payload LIKE '%completeness%'`}},
			{"a field written twice for one approval", invariant.WriteOnce, []string{
				`INSERT INTO record_history (tbl, uid, field, old_value, new_value, user_uid, run_uuid, created_at)
					SELECT tbl, uid, field, old_value, new_value, user_uid, run_uuid, created_at FROM record_history WHERE run_uuid <> ''`}},
			{"a write in a run without approval", invariant.ApprovedWrite, []string{
				"INSERT INTO runs (uuid, configuration, initiator, status, created_at, updated_at) VALUES ('r-unapproved', 1, 2, 'completed', 1, 1)",
				`INSERT INTO record_history (tbl, uid, field, old_value, new_value, user_uid, run_uuid, created_at)
					VALUES ('pages', 2, 'description', 'Short.', 'Long.', 2, 'r-unapproved', 1)`,
				`INSERT INTO run_events (run_uuid, sequence, kind, payload, created_at)
					VALUES ('r-unapproved', 1, 'tool_write', '{"table":"pages","uid":2,"fields":["description"],"completeness":"complete","hookFailedAfterWrite":false}', 1)`}},
			{"a waiting run without its suspended turn", invariant.RunState, []string{
				"INSERT INTO runs (uuid, configuration, initiator, status, created_at, updated_at) VALUES ('r-waiting', 1, 2, 'waiting_for_approval', 1, 1)"}},
			{"a queued run without a job", invariant.RunState, []string{
				"INSERT INTO runs (uuid, configuration, initiator, status, created_at, updated_at) VALUES ('r-queued', 1, 2, 'queued', 1, 1)"}},
			{"a running run without a lease", invariant.RunLease, []string{
				"INSERT INTO runs (uuid, configuration, initiator, status, created_at, updated_at) VALUES ('r-unleased', 1, 2, 'running', 1, 1)"}},
			{"a running run whose lease expired", invariant.RunLease, []string{
				"INSERT INTO runs (uuid, configuration, initiator, status, lease_owner, lease_expires_at, created_at, updated_at) VALUES ('r-expired', 1, 2, 'running', 'w1', 1, 1, 1)"}},
			{"a processing conversation with no job and no live run", invariant.ConversationStuck, []string{
				"UPDATE conversations SET status = 'processing'"}},
			{"an accepted skip whose open point is gone", invariant.OpenPoint, []string{
				"DELETE FROM open_points WHERE field = 'seoTitle'"}},
			{"an accepted skip the chat recorded nothing of", invariant.OpenPoint, []string{
				"DELETE FROM conversation_outcomes WHERE outcome = 'skipped'"}},
			{"content in an event at privacy metadata", invariant.Privacy, []string{
				`UPDATE run_events SET payload = '{"callId":"c1","arguments":"{\"description\": \"Eine neue Beschreibung.\"}"}'
					WHERE kind = 'tool' AND payload LIKE '%completeness%'`}},
			{"an answer kept at privacy metadata", invariant.Privacy, []string{
				"UPDATE runs SET answer = 'Fertig.' WHERE uuid = '" + tourRun + "'"}},
		}
		seen := before
		for _, tc := range cases {
			for _, q := range tc.sql {
				if _, err := db.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %s: %v", tc.name, q, err)
				}
			}
			after, err := c.Check(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var added []invariant.Violation
			for _, v := range after {
				if !slices.Contains(seen, v) {
					added = append(added, v)
				}
			}
			if len(added) == 0 {
				t.Errorf("%s: no new violation, want %s", tc.name, tc.check)
			}
			for _, v := range added {
				if v.Check != tc.check {
					t.Errorf("%s: new violation %s, want only %s", tc.name, v, tc.check)
				}
			}
			seen = after
		}
		_ = at
	})
}
