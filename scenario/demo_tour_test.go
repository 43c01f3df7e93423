package scenario_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/demo"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// demoTour drives one conversation of the demo site through the chat API as
// the editor erika, with the demo configuration and its offline model.
type demoTour struct {
	t     *testing.T
	e     *wt.Env
	erika *wt.Client
	id    string
	conv  map[string]any
}

// startDemoTour opens a conversation with the process skill on page/language
// and sends the editor's first message.
func startDemoTour(t *testing.T, e *wt.Env, page, language int64, skill int) *demoTour {
	t.Helper()
	return startDemoTourAs(t, e, "demo-token-erika", page, language, skill)
}

// startDemoTourAs starts the tour as the user of token.
func startDemoTourAs(t *testing.T, e *wt.Env, token string, page, language int64, skill int) *demoTour {
	t.Helper()
	d := &demoTour{t: t, e: e, erika: e.As(token)}
	conv := wt.Decode[wt.Conversation](t, d.erika.Must("POST", "/api/conversations", map[string]any{"page": page, "language": language, "skill": skill}, http.StatusCreated))
	d.id = fmt.Sprint(conv.ID)
	d.step("POST", "/messages", map[string]any{"content": "Los geht's"})
	return d
}

// step sends one request of the conversation, waits for the turn and reloads it.
func (d *demoTour) step(method, path string, body any) {
	d.t.Helper()
	d.erika.Must(method, "/api/conversations/"+d.id+path, body, http.StatusAccepted)
	d.e.App.Chat.Wait()
	d.conv = d.erika.Must("GET", "/api/conversations/"+d.id, nil, http.StatusOK).Map(d.t)
}

// answer gives the card's answer.
func (d *demoTour) answer(a string) {
	d.t.Helper()
	d.step("POST", "/answer", map[string]any{"turnDigest": d.card()["turnDigest"], "answer": a})
}

func (d *demoTour) card() map[string]any {
	d.t.Helper()
	c, ok := d.conv["card"].(map[string]any)
	if !ok {
		d.t.Fatalf("no card: status %v, error %v, messages %v", d.conv["status"], d.conv["error"], d.conv["messages"])
	}
	return c
}

// proposal is the one field the card proposes: its target, field and text.
type proposal struct {
	table, field, text string
	uid                int64
	min, max           int
}

func (d *demoTour) proposal() proposal {
	d.t.Helper()
	calls := d.card()["calls"].([]any)
	if len(calls) != 1 {
		d.t.Fatalf("card has %d calls, want one proposal", len(calls))
	}
	call := calls[0].(map[string]any)
	target := call["target"].(map[string]any)
	pv := call["preview"].([]any)
	if len(pv) != 1 {
		d.t.Fatalf("proposal changes %d fields, want one", len(pv))
	}
	item := pv[0].(map[string]any)
	p := proposal{table: target["table"].(string), uid: int64(target["uid"].(float64)), field: item["field"].(string), text: item["proposed"].(string)}
	if m, ok := item["measure"].(map[string]any); ok {
		p.min, p.max = int(m["min"].(float64)), int(m["max"].(float64))
	}
	return p
}

// progress is the conversation's "point current of total".
func (d *demoTour) progress() (current, total int, completed bool) {
	p, _ := d.conv["progress"].(map[string]any)
	if p == nil {
		return 0, 0, false
	}
	c, _ := p["completed"].(bool)
	return int(p["current"].(float64)), int(p["total"].(float64)), c
}

func (d *demoTour) highlight() string {
	h, _ := d.conv["highlight"].(map[string]any)
	if h == nil {
		return ""
	}
	return fmt.Sprintf("%v:%v", h["table"], h["uid"])
}

func (d *demoTour) lastAssistant() string {
	msgs := d.conv["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i].(map[string]any); m["role"] == "assistant" {
			s, _ := m["content"].(string)
			return s
		}
	}
	return ""
}

// expect checks the card: target, field, "point n of m", the highlight and a
// proposal of whole sentences within the field's recommended length.
func (d *demoTour) expect(table string, uid int64, field string, point, total int, highlight string) proposal {
	d.t.Helper()
	p := d.proposal()
	if p.table != table || p.uid != uid || p.field != field {
		d.t.Fatalf("card proposes %s:%d %s, want %s:%d %s", p.table, p.uid, p.field, table, uid, field)
	}
	if c, n, done := d.progress(); c != point || n != total || done {
		d.t.Errorf("progress = %d of %d (completed %v), want %d of %d", c, n, done, point, total)
	}
	if h := d.highlight(); h != highlight {
		d.t.Errorf("highlight = %q, want %q", h, highlight)
	}
	if n := n(p.text); p.max > 0 && (n < p.min || n > p.max) {
		d.t.Errorf("%s proposal %q has %d characters, want %d to %d", field, p.text, n, p.min, p.max)
	}
	if field == "description" || field == "bodytext" {
		if !strings.HasSuffix(p.text, ".") || strings.HasSuffix(p.text, " .") {
			d.t.Errorf("%s proposal %q does not end with a whole sentence", field, p.text)
		}
	}
	return p
}

// english and german report words only one of the two languages uses.
func english(s string) bool {
	return strings.Contains(s, " the ") || strings.Contains(s, " at ") || strings.Contains(s, " and ") || strings.Contains(s, " for ")
}

func german(s string) bool {
	return strings.Contains(s, " bei ") || strings.Contains(s, " und ") || strings.Contains(s, " für ") || strings.Contains(s, " der ") ||
		strings.Contains(s, " Sie ") || strings.Contains(s, "Über")
}

// TestDemoTourCountsPointsHighlightsReactsToTheFourAnswersAndSummarises runs
// the SEO tour of the English "About" page: four findings, each proposed
// with "point n of 4", the element highlighted and a text within the field's
// recommended length; apply writes, variant brings another wording of the
// same field, skip and keep move on.
func TestDemoTourCountsPointsHighlightsAndReactsToTheFourAnswers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), nil)
		d := startDemoTour(t, e, 2, 0, 1)
		if tour := d.conv["tour"].(map[string]any); tour["pageTitle"] != "About" {
			t.Errorf("tour = %v", tour)
		}
		desc := d.expect("pages", 2, "description", 1, 4, "pages:2")
		if german(desc.text) || !strings.Contains(desc.text, "About") {
			t.Errorf("the English page gets %q", desc.text)
		}
		d.answer("apply")
		first := d.expect("pages", 2, "seoTitle", 2, 4, "pages:2")
		d.answer("variant")
		second := d.expect("pages", 2, "seoTitle", 2, 4, "pages:2")
		if second.text == first.text {
			t.Errorf("variant repeats %q", first.text)
		}
		d.answer("variant")
		if third := d.expect("pages", 2, "seoTitle", 2, 4, "pages:2"); third.text == first.text || third.text == second.text {
			t.Errorf("second variant %q repeats an earlier one (%q, %q)", third.text, first.text, second.text)
		}
		d.answer("skip")
		d.expect("tt_content", 110, "header", 3, 4, "tt_content:110")
		d.answer("keep")
		d.expect("tt_content", 112, "header", 4, 4, "tt_content:112")
		var fields string
		_ = db.QueryRow(t.Context(), "SELECT fields FROM records WHERE tbl = 'pages' AND uid = 2").Scan(&fields)
		if !strings.Contains(fields, desc.text) || strings.Contains(fields, first.text) {
			t.Errorf("page 2 = %s", fields)
		}
	})
}

// TestDemoTourWritesInThePageLanguage runs the SEO tour of the German
// translation of "About": the proposals are German and written to the
// translation record and its German content element.
func TestDemoTourWritesInThePageLanguage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), nil)
		d := startDemoTour(t, e, 2, 1, 1)
		desc := d.expect("pages", 12, "description", 1, 3, "pages:2")
		if !german(desc.text) || english(desc.text) || !strings.Contains(desc.text, "Über uns") {
			t.Errorf("the German page gets %q", desc.text)
		}
		d.answer("apply")
		title := d.expect("pages", 12, "seoTitle", 2, 3, "pages:2")
		if english(" " + title.text + " ") {
			t.Errorf("German SEO title %q", title.text)
		}
		d.answer("skip")
		header := d.expect("tt_content", 111, "header", 3, 3, "tt_content:111")
		if !strings.HasPrefix(header.text, "Über uns") || english(header.text) {
			t.Errorf("German header %q", header.text)
		}
	})
}

// TestDemoTourStartsAgainFromTheSkippedPoint: a point skipped in one tour is
// an open point; after the editor ends that tour, the next tour of the same
// page and skill offers it first.
func TestDemoTourStartsAgainFromTheSkippedPoint(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), nil)
		d := startDemoTour(t, e, 2, 0, 1)
		d.answer("keep")
		d.expect("pages", 2, "seoTitle", 2, 4, "pages:2")
		d.answer("skip")
		d.expect("tt_content", 110, "header", 3, 4, "tt_content:110")
		ended := wt.Decode[wt.Conversation](t, d.erika.Must("POST", "/api/conversations/"+d.id+"/end-tour", nil, http.StatusOK))
		if ended.Status != "idle" || ended.Card != nil || ended.Skill != nil {
			t.Fatalf("after end-tour: %+v", ended)
		}
		points := wt.Decode[wt.OpenPoints](t, d.erika.Must("GET", "/api/pages/2/open-points", nil, http.StatusOK)).OpenPoints
		if len(points) != 1 || points[0].Field != "seoTitle" {
			t.Fatalf("open points = %+v", points)
		}
		again := startDemoTour(t, e, 2, 0, 1)
		again.expect("pages", 2, "seoTitle", 1, 4, "pages:2")
	})
}
