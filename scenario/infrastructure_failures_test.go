package scenario_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// An inbox whose run cannot be read answers 500 internal and logs it; it
// is never folded into an empty inbox.
func TestInboxWithAnUnreadableRunAnswersInternalNotEmpty(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		e.LLM.Add(standard()...)
		erika := e.As(wt.Erika)
		st := startRun(t, erika, 1, false)
		if st.Status != "waiting_for_approval" {
			t.Fatalf("run = %v, want waiting_for_approval", st.Status)
		}
		list := wt.Decode[wt.Inbox](t, erika.Must("GET", "/api/inbox", nil, http.StatusOK))
		if len(list.Runs) != 1 {
			t.Fatalf("inbox before = %+v, want the one waiting run", list)
		}
		if _, err := db.Exec(context.Background(), `UPDATE runs SET allowed_tools = 'not json' WHERE uuid = ?`, st.UUID); err != nil {
			t.Fatal(err)
		}
		r := erika.Do("GET", "/api/inbox", nil)
		if r.Status != http.StatusInternalServerError || r.ErrorCode() != "internal" {
			t.Fatalf("inbox with an unreadable run = %d %s, want 500 internal (not an empty inbox)", r.Status, r.Body)
		}
		if strings.Contains(string(r.Body), "allowed tools") {
			t.Errorf("the answer shows the cause: %s", r.Body)
		}
	})
}

// A closed database answers 500 internal, never a domain answer such as
// 404 or an empty list.
func TestClosedDatabaseAnswersInternalNotNotFound(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		erika := e.As(wt.Erika)
		erika.Must("GET", "/api/conversations", nil, http.StatusOK)
		if err := db.SQL.Close(); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/api/inbox", "/api/conversations", "/api/runs/00000000-0000-0000-0000-000000000000", "/api/conversations/1"} {
			if r := erika.Do("GET", path, nil); r.Status != http.StatusInternalServerError || r.ErrorCode() != "internal" {
				t.Errorf("GET %s on a closed database = %d %s, want 500 internal", path, r.Status, r.Body)
			}
		}
	})
}
