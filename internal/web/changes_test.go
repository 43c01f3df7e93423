package web_test

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// The export of applied changes names, for each changed field, the page,
// language, table, field, old and new value, model, configuration, the
// process skill with its approved version digest, who answered and who
// released it under four eyes, and when — as JSON and as CSV; an editor
// gets the changes she answered or released, an administrator all.
func TestTheChangesExportNamesEveryAppliedChangeAndWhoDecided(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		// A process tour erika applies herself (one person).
		tour := "Home of the demo company: websites, shops and consulting for firms in the north."
		e.LLM.Add(write("c1", `{"description": "`+tour+`"}`), say("Fertig."))
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", seo)
		b.post(path+"/answer", url.Values{"turnDigest": {turnDigest(t, b.get(path))}, "answer": {"apply"}})
		e.App.Chat.Wait()
		// A four-eyes change erika asks for and paula releases.
		e.LLM.Add(write("c2", `{"seoTitle": "Vier Augen sehen mehr"}`), say("Erledigt."))
		run := e.As(wt.Erika).Must("POST", "/api/runs", map[string]any{"configuration": 2,
			"messages": []map[string]string{{"role": "user", "content": "SEO-Titel bitte"}}}, http.StatusCreated).Map(t)
		paula := login(t, e, "paula", "paula-pass-1234")
		inbox := paula.get("/inbox")
		paula.post("/inbox/"+run["uuid"].(string), url.Values{"turnDigest": {turnDigest(t, inbox)}, "answer": {"approve"}})

		all := e.As(wt.Admin).Must("GET", "/api/changes?format=json&page=1", nil, http.StatusOK).Map(t)
		cs, _ := all["changes"].([]any)
		if len(cs) != 2 {
			t.Fatalf("changes = %v, want 2", all)
		}
		first, second := cs[0].(map[string]any), cs[1].(map[string]any)
		if first["page"] != 1.0 || first["language"] != 0.0 || first["table"] != "pages" || first["field"] != "description" ||
			first["oldValue"] != "" || first["newValue"] != tour || first["model"] != "m" || first["configuration"] != 1.0 ||
			first["configurationIdentifier"] != "chat" || first["skill"] != 12.0 || first["skillIdentifier"] != "seo" ||
			first["skillDigest"] == "" ||
			first["answeredBy"] != "erika" || first["releasedBy"] != "" || first["at"] == "" {
			t.Errorf("the tour's change = %v", first)
		}
		if second["field"] != "seoTitle" || second["newValue"] != "Vier Augen sehen mehr" || second["configuration"] != 2.0 ||
			second["answeredBy"] != "erika" || second["releasedBy"] != "paula" || second["skill"] != 0.0 {
			t.Errorf("the four-eyes change = %v", second)
		}
		// CSV: a header and one line per change.
		res := e.As(wt.Admin).Must("GET", "/api/changes?format=csv", nil, http.StatusOK)
		lines, err := csv.NewReader(strings.NewReader(string(res.Body))).ReadAll()
		if err != nil || len(lines) != 3 || lines[0][0] != "at" || lines[1][7] != tour || lines[2][15] != "paula" {
			t.Errorf("csv = %q (%v)", res.Body, err)
		}
		// Each editor her own: paula released the second; otto answered none.
		if n := len(e.As(wt.Paula).Must("GET", "/api/changes", nil, http.StatusOK).Map(t)["changes"].([]any)); n != 1 {
			t.Errorf("paula sees %d changes, want the one she released", n)
		}
		if n := len(e.As(wt.Otto).Must("GET", "/api/changes", nil, http.StatusOK).Map(t)["changes"].([]any)); n != 0 {
			t.Errorf("otto sees %d changes, want none", n)
		}
		// Filters: a time window after them, another page, a site.
		for q, want := range map[string]int{"from=2100-01-01": 0, "to=2000-01-01T00:00:00Z": 0, "page=2": 0, "site=1": 2, "from=2000-01-01&to=2100-01-01": 2} {
			if n := len(e.As(wt.Admin).Must("GET", "/api/changes?"+q, nil, http.StatusOK).Map(t)["changes"].([]any)); n != want {
				t.Errorf("?%s: %d changes, want %d", q, n, want)
			}
		}
	})
}

// Bad input gets a 400 with a clear code.
func TestTheChangesExportRefusesBadInput(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		for q, code := range map[string]string{"format=xml": "bad_format", "from=yesterday": "bad_time", "to=2026-13-01": "bad_time",
			"page=0": "bad_page", "site=abc": "bad_page"} {
			r := e.As(wt.Admin).Must("GET", "/api/changes?"+q, nil, http.StatusBadRequest).Map(t)
			if got := r["error"].(map[string]any)["code"]; got != code {
				t.Errorf("?%s: code %v, want %s", q, got, code)
			}
		}
	})
}
