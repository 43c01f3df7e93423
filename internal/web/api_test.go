package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

func stringsContains(a, b string) bool { return strings.Contains(a, b) }

// The JSON API serves what the screens show: the page tree, a page's
// preview (404 alike for unknown pages and pages the caller may not show),
// the usable configurations and the localized labels.
func TestScreenReadsOfTheJSONAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		erika := e.As(wt.Erika)
		tree := erika.Must("GET", "/api/pages", nil, http.StatusOK).Map(t)
		pages := tree["pages"].([]any)
		if len(pages) != 1 || pages[0].(map[string]any)["title"] != "Home" {
			t.Fatalf("tree = %v", tree)
		}
		if kids := pages[0].(map[string]any)["children"].([]any); len(kids) != 1 || kids[0].(map[string]any)["title"] != "About" {
			t.Errorf("children of Home = %v", kids)
		}
		if tr := pages[0].(map[string]any)["translations"].([]any); len(tr) != 1 || tr[0] != 1.0 {
			t.Errorf("translations of Home = %v, want [1]", tr)
		}
		p := erika.Must("GET", "/api/pages/1/preview?language=1", nil, http.StatusOK).Map(t)
		if p["title"] != "Startseite" || p["record"] != 11.0 {
			t.Errorf("German preview of Home = %v", p)
		}
		var headers []string
		for _, el := range p["elements"].([]any) {
			headers = append(headers, el.(map[string]any)["header"].(string))
		}
		if strings.Join(headers, ",") != "Willkommen,Office" {
			t.Errorf("German preview elements = %v, want the translation and the all-languages element", headers)
		}
		unknown := erika.Must("GET", "/api/pages/999/preview", nil, http.StatusNotFound)
		robot := e.As(wt.Admin).Must("GET", "/api/pages/1/preview", nil, http.StatusOK)
		_ = robot
		if unknown.ErrorCode() != "not_found" {
			t.Errorf("unknown page preview = %s", unknown.Body)
		}
		erika.Must("GET", "/api/pages/1/preview?language=-1", nil, http.StatusBadRequest)
		cfgs := erika.Must("GET", "/api/configurations", nil, http.StatusOK).Map(t)["configurations"].([]any)
		if len(cfgs) != 2 || cfgs[1].(map[string]any)["requireSecondApprover"] != true {
			t.Errorf("configurations = %v", cfgs)
		}
		labels := erika.Must("GET", "/api/labels", nil, http.StatusOK).Map(t)
		if labels["lang"] != "de" || labels["labels"].(map[string]any)["answer.apply"] != "Übernehmen" {
			t.Errorf("labels for erika = %v", labels["lang"])
		}
		en := erika.Must("GET", "/api/labels?lang=en", nil, http.StatusOK).Map(t)
		if en["labels"].(map[string]any)["outcome.skipped"] != "Skipped" {
			t.Errorf("English labels = %v", en["lang"])
		}
	})
}

// A conversation may start in a configuration the user may use; an unknown
// one is refused and creates nothing.
func TestConversationStartsInTheChosenConfiguration(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		erika := e.As(wt.Erika)
		c := erika.Must("POST", "/api/conversations", map[string]any{"page": 1, "language": 0, "configuration": 2}, http.StatusCreated).Map(t)
		if c["configuration"] != 2.0 {
			t.Errorf("configuration = %v, want 2", c["configuration"])
		}
		r := erika.Must("POST", "/api/conversations", map[string]any{"page": 1, "language": 0, "configuration": 99}, http.StatusNotFound)
		if r.ErrorCode() != "configuration_not_found" {
			t.Errorf("unknown configuration = %s", r.Body)
		}
		if n := len(erika.Must("GET", "/api/conversations", nil, http.StatusOK).Map(t)["conversations"].([]any)); n != 1 {
			t.Errorf("%d conversations after one refused start, want 1", n)
		}
	})
}

// The transcript shows an answer in the editor's language: otto (en) applied
// a card, so his conversation reads "Apply", erika's (de) "Übernehmen".
func TestAnswerInTheTranscriptIsInTheEditorsLanguage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		for _, c := range []struct{ token, want string }{{wt.Otto, "Apply"}, {wt.Erika, "Übernehmen"}} {
			e.LLM.Add(write("c1", `{"description": "Neu."}`), say("Ok."))
			cl := e.As(c.token)
			conv := cl.Must("POST", "/api/conversations", map[string]any{"page": 1, "language": 0, "skill": 12}, http.StatusCreated).Map(t)
			id := strconv.Itoa(int(conv["id"].(float64)))
			cl.Must("POST", "/api/conversations/"+id+"/messages", map[string]any{"content": "Los"}, http.StatusAccepted)
			e.App.Chat.Wait()
			conv = cl.Must("GET", "/api/conversations/"+id, nil, http.StatusOK).Map(t)
			card := conv["card"].(map[string]any)
			cl.Must("POST", "/api/conversations/"+id+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": "apply"}, http.StatusAccepted)
			e.App.Chat.Wait()
			msgs := cl.Must("GET", "/api/conversations/"+id, nil, http.StatusOK).Map(t)["messages"].([]any)
			if got := msgs[1].(map[string]any)["content"]; got != c.want {
				t.Errorf("answer in %s's transcript = %v, want %s", c.token, got, c.want)
			}
		}
	})
}
