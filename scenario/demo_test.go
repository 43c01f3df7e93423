package scenario_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/demo"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// TestDemoModelRunsAnSEOTourEndToEnd walks the offline demo model through
// page 2 of the demo site with the "SEO optimieren" process invoked through
// the runs API (its cards offer the reasons, P.R5): it reads the page,
// proposes one change per turn, answers "variant" with another wording,
// moves on after "skip" and "keep", and ends when nothing is left — every
// write only after an approval.
func TestDemoModelRunsAnSEOTourEndToEnd(t *testing.T) {
	db := storetest.SQLite(t)
	e := wt.New(t, db, string(demo.Fixture), nil)
	erika := e.As("demo-token-erika")
	st := erika.Must("POST", "/api/runs", map[string]any{"configuration": 1,
		"messages":   []map[string]string{{"role": "user", "content": "SEO optimieren für Seite 2"}},
		"invocation": map[string]any{"skill": 1, "subject": map[string]any{"table": "pages", "uid": 2, "language": 0}}},
		http.StatusCreated).Map(t)
	id := st["uuid"].(string)
	proposal := func(st map[string]any) (field, proposed string) {
		t.Helper()
		p, ok := st["pending"].(map[string]any)
		if !ok {
			t.Fatalf("no proposal: %v", st)
		}
		pv := p["calls"].([]any)[0].(map[string]any)["preview"].([]any)[0].(map[string]any)
		return pv["field"].(string), pv["proposed"].(string)
	}
	decide := func(st map[string]any, approve bool, reason string) map[string]any {
		t.Helper()
		body := map[string]any{"approve": approve, "turnDigest": pendingDigest(t, st)}
		if reason != "" {
			body["reason"] = reason
		}
		return erika.Must("POST", "/api/runs/"+id+"/approval", body, http.StatusOK).Map(t)
	}
	// 1. The missing description comes first; it is applied.
	field, text := proposal(st)
	if field != "description" || n(text) < 140 || n(text) > 160 {
		t.Fatalf("first proposal %s = %q (%d chars)", field, text, n(text))
	}
	st = decide(st, true, "")
	// 2. The SEO title; "another variant" brings a different wording of the same field.
	field, first := proposal(st)
	if field != "seoTitle" {
		t.Fatalf("second proposal is %s", field)
	}
	st = decide(st, false, "variant")
	field, second := proposal(st)
	if field != "seoTitle" || second == first {
		t.Fatalf("variant: %s %q after %q", field, second, first)
	}
	// 3. Skip it: the tour moves on to the headers of the text elements.
	st = decide(st, false, "skip")
	if field, _ = proposal(st); field != "header" {
		t.Fatalf("after skip the proposal is %s", field)
	}
	st = decide(st, false, "keep")
	if field, _ = proposal(st); field != "header" {
		t.Fatalf("after keep the proposal is %s", field)
	}
	st = decide(st, true, "")
	if st["status"] != "completed" || !strings.Contains(st["answer"].(string), "is done: 4 points") {
		t.Fatalf("tour end: %v", st)
	}
	var fields string
	_ = db.QueryRow(context.Background(), "SELECT fields FROM records WHERE tbl = 'pages' AND uid = 2").Scan(&fields)
	if !strings.Contains(fields, text) || strings.Contains(fields, first) || strings.Contains(fields, second) {
		t.Errorf("page 2 = %s", fields)
	}
}

func n(s string) int { return len([]rune(s)) }

// TestDemoChatTourWithTheProcessSkill runs the demo's "SEO optimieren"
// process through the chat API with the offline model: the card offers the
// four answers, Überspringen records an open point, Übernehmen writes.
func TestDemoChatTourWithTheProcessSkill(t *testing.T) {
	db := storetest.SQLite(t)
	e := wt.New(t, db, string(demo.Fixture), nil)
	erika := e.As("demo-token-erika")
	conv := erika.Must("POST", "/api/conversations", map[string]any{"page": 2, "language": 0, "skill": 1}, http.StatusCreated).Map(t)
	id := fmt.Sprint(conv["id"])
	next := func(method, path string, body any) map[string]any {
		t.Helper()
		erika.Must(method, path, body, http.StatusAccepted)
		e.App.Chat.Wait()
		return erika.Must("GET", "/api/conversations/"+id, nil, 200).Map(t)
	}
	conv = next("POST", "/api/conversations/"+id+"/messages", map[string]any{"content": "Bitte SEO optimieren"})
	card, ok := conv["card"].(map[string]any)
	if !ok || fmt.Sprint(card["answers"]) != "[apply variant skip keep]" {
		t.Fatalf("first card: %v", conv)
	}
	if tour := conv["tour"].(map[string]any); tour["pageTitle"] != "About" {
		t.Errorf("tour = %v", tour)
	}
	conv = next("POST", "/api/conversations/"+id+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": "skip"})
	points := erika.Must("GET", "/api/pages/2/open-points", nil, 200).Map(t)["openPoints"].([]any)
	if len(points) != 1 {
		t.Fatalf("open points after skip: %v", points)
	}
	card = conv["card"].(map[string]any)
	conv = next("POST", "/api/conversations/"+id+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": "apply"})
	if out := conv["outcomes"].([]any); len(out) != 2 || out[1].(map[string]any)["outcome"] != "applied" {
		t.Fatalf("outcomes = %v", out)
	}
}

// TestDemoLoginsDescribeEachEditorsRights holds the demo's logins to what
// they say (issue 11 item 5): erika edits the website except the Services
// branch, which she may only read — a proposal there never becomes a card —
// and max edits the German pages of the Services branch.
func TestDemoLoginsDescribeEachEditorsRights(t *testing.T) {
	db := storetest.SQLite(t)
	e := wt.New(t, db, string(demo.Fixture), nil)
	tour := func(token string, page, language int) map[string]any {
		t.Helper()
		c := e.As(token)
		conv := c.Must("POST", "/api/conversations", map[string]any{"page": page, "language": language, "skill": 1}, http.StatusCreated).Map(t)
		id := fmt.Sprint(conv["id"])
		c.Must("POST", "/api/conversations/"+id+"/messages", map[string]any{"content": "Bitte SEO optimieren"}, http.StatusAccepted)
		e.App.Chat.Wait()
		return c.Must("GET", "/api/conversations/"+id, nil, 200).Map(t)
	}
	if conv := tour("demo-token-erika", 5, 0); conv["status"] != "idle" || conv["card"] != nil {
		t.Errorf("erika on Consulting (Services branch, read only): %v", conv)
	}
	var n int
	_ = db.QueryRow(context.Background(), "SELECT COUNT(*) FROM record_history").Scan(&n)
	if n != 0 {
		t.Errorf("%d history rows after erika's tour on a page she may only read", n)
	}
	if conv := tour("demo-token-max", 14, 1); conv["card"] == nil {
		t.Errorf("max on Webentwicklung (German, Services branch) got no card: %v", conv)
	}
	if conv := tour("demo-token-erika", 2, 0); conv["card"] == nil {
		t.Errorf("erika on About got no card: %v", conv)
	}
	for _, l := range demo.Logins() {
		if l.Username == "erika" && !strings.Contains(l.Role, "Services") {
			t.Errorf("erika's login says %q: it must say she may only read the Services branch", l.Role)
		}
	}
}

// TestDemoFourEyesConfigurationIsReachableFromTheChat: the demo's four-eyes
// configuration can be chosen for a conversation (issue 11 item 12); its
// card waits for a second person: it is in paula's inbox, and erika cannot
// release it herself.
func TestDemoFourEyesConfigurationIsReachableFromTheChat(t *testing.T) {
	db := storetest.SQLite(t)
	e := wt.New(t, db, string(demo.Fixture), nil)
	erika, paula := e.As("demo-token-erika"), e.As("demo-token-paula")
	conv := erika.Must("POST", "/api/conversations", map[string]any{"page": 2, "language": 0, "configuration": 2}, http.StatusCreated).Map(t)
	id := fmt.Sprint(conv["id"])
	erika.Must("POST", "/api/conversations/"+id+"/messages", map[string]any{"content": "SEO optimieren für Seite 2"}, http.StatusAccepted)
	e.App.Chat.Wait()
	conv = erika.Must("GET", "/api/conversations/"+id, nil, 200).Map(t)
	card, _ := conv["card"].(map[string]any)
	if card == nil || card["approveBlocked"] != "second_approver" {
		t.Fatalf("the four-eyes card = %v", conv)
	}
	inbox := paula.Must("GET", "/api/inbox", nil, 200).Map(t)
	runs, _ := inbox["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("paula's inbox = %v", inbox)
	}
	if r := erika.Do("POST", "/api/conversations/"+id+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": "approve"}); r.Status != http.StatusConflict {
		t.Errorf("erika releasing her own four-eyes card = %d %s, want 409", r.Status, r.Body)
	}
}
