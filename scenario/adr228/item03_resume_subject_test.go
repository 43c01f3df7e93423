package adr228_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L3.8: a resumed run carries the subject only while the same check still
// passes. The seo process on page 1 proposes a write and waits; before the
// approval, erika's group may or may no longer edit the default language.
// The preview (a read) is unchanged either way, so the approval goes
// through; after it, highlighting the subject works only while the subject
// check still passes.
func TestL3_8_ResumedRunCarriesSubjectOnlyWhileCheckPasses(t *testing.T) {
	cases := []struct {
		name       string
		revoke     bool
		write      string // what the approved write answered, in part
		highlight  string // what highlight_record on the subject answered
		highlights bool   // the status shows the subject highlighted
	}{
		{"the check still passes", false, `"written"`, `{"highlighted":{"table":"pages","uid":1}}`, true},
		{"the language was taken away while it waited", true, `"error"`, `{"error":"no subject to highlight"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db, nil)
				e.LLM.Add(
					call("w1", "update_page_metadata", `{"page": 1, "fields": {"description": "Neu"}}`),
					call("h1", "highlight_record", `{"table": "pages", "uid": 1}`),
					answer("fertig"),
				)
				erika := e.As(wt.Erika)
				st := startSEO(t, erika, 1)
				if st.Status != "waiting_for_approval" || st.Pending == nil {
					t.Fatalf("status = %+v, want waiting_for_approval", st)
				}
				if c.revoke {
					// Language 0 leaves erika's reach; page 1 stays readable.
					exec(t, db, `UPDATE be_groups SET languages = '[1]' WHERE uid = 1`)
				}
				done, r := erika.Decide(st.UUID, wt.Approve{Approve: true, TurnDigest: st.Pending.TurnDigest})
				if r.Status != http.StatusOK {
					t.Fatalf("approval = %d, want 200: %s", r.Status, r.Body)
				}
				if done.Status != "completed" {
					t.Fatalf("after approval: %+v, want completed", done)
				}
				reqs := e.LLM.Requests()
				if len(reqs) != 3 {
					t.Fatalf("model requests = %d, want 3", len(reqs))
				}
				results := toolResults(reqs[2].Messages)
				if !strings.Contains(results["w1"], c.write) {
					t.Errorf("write answered %s, want it to contain %s", results["w1"], c.write)
				}
				if results["h1"] != c.highlight {
					t.Errorf("highlight_record on the subject answered %s, want %s", results["h1"], c.highlight)
				}
				final := erika.MustRun(st.UUID)
				var h struct {
					Table string `json:"table"`
					UID   int64  `json:"uid"`
				}
				if len(final.Highlight) > 0 && string(final.Highlight) != "null" {
					if err := json.Unmarshal(final.Highlight, &h); err != nil {
						t.Fatalf("highlight %s: %v", final.Highlight, err)
					}
				}
				if got := h.Table == "pages" && h.UID == 1; got != c.highlights {
					t.Errorf("status highlight = %s, want the subject highlighted: %v", final.Highlight, c.highlights)
				}
			})
		})
	}
}

// toolResults maps tool call ids to the results the model was sent.
func toolResults(msgs []llm.Message) map[string]string {
	out := map[string]string{}
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}
