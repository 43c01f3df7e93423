package scenario_test

import (
	"fmt"
	"net/http"
	"testing"

	"waymark/internal/demo"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// A process proposes changes: on a page the editor may only read its tour
// could save none, so the API refuses to begin it — at the start of a
// conversation and when a process is chosen in a free chat — with 409
// page_read_only, and changes nothing. Reading the page in a free chat stays
// allowed; the same process on a page she may edit begins.
func TestAProcessOnAPageTheEditorMayOnlyReadIsRefusedAndChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), nil)
		erika := e.As("demo-token-erika")
		const services, about, seo = 3, 2, 1 // erika may only read Services (demo site)
		before := erika.Must("GET", "/api/conversations", nil, http.StatusOK).Body

		r := erika.Do("POST", "/api/conversations", map[string]any{"page": services, "language": 0, "skill": seo})
		if r.Status != http.StatusConflict || r.ErrorCode() != "page_read_only" {
			t.Fatalf("a process on a read-only page: %d %s, want 409 page_read_only", r.Status, r.Body)
		}
		if after := erika.Must("GET", "/api/conversations", nil, http.StatusOK).Body; string(after) != string(before) {
			t.Errorf("a refused start created a conversation: %s", after)
		}

		free := wt.Decode[wt.Conversation](t, erika.Must("POST", "/api/conversations",
			map[string]any{"page": services, "language": 0}, http.StatusCreated))
		r = erika.Do("POST", "/api/conversations/"+fmt.Sprint(free.ID)+"/skill", map[string]any{"skill": seo})
		if r.Status != http.StatusConflict || r.ErrorCode() != "page_read_only" {
			t.Fatalf("a process chosen on a read-only page: %d %s, want 409 page_read_only", r.Status, r.Body)
		}
		if got := erika.Must("GET", "/api/conversations/"+fmt.Sprint(free.ID), nil, http.StatusOK).Map(t)["skill"]; got != nil {
			t.Errorf("the refused choice changed the conversation's skill: %v", got)
		}

		erika.Must("POST", "/api/conversations", map[string]any{"page": about, "language": 0, "skill": seo}, http.StatusCreated)
	})
}
