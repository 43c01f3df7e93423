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
	created := erika.Must("POST", "/api/runs", map[string]any{"configuration": 1,
		"messages":   []map[string]string{{"role": "user", "content": "SEO optimieren für Seite 2"}},
		"invocation": map[string]any{"skill": 1, "subject": map[string]any{"table": "pages", "uid": 2, "language": 0}}},
		http.StatusCreated)
	st := wt.Decode[wt.RunStatus](t, created)
	id := st.UUID
	proposal := func(st wt.RunStatus) (field, proposed string) {
		t.Helper()
		if st.Pending == nil {
			t.Fatalf("no proposal: %+v", st)
		}
		pv := st.Pending.Calls[0].Preview[0]
		return pv.Field, pv.Proposed
	}
	decide := func(st wt.RunStatus, approve bool, reason string) wt.RunStatus {
		t.Helper()
		body := map[string]any{"approve": approve, "turnDigest": pendingDigest(t, st)}
		if reason != "" {
			body["reason"] = reason
		}
		return wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs/"+id+"/approval", body, http.StatusOK))
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
	if st.Status != "completed" || !strings.Contains(st.Answer, "is done: 4 points") {
		t.Fatalf("tour end: %+v", st)
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
	conv := wt.Decode[wt.Conversation](t, erika.Must("POST", "/api/conversations", map[string]any{"page": 2, "language": 0, "skill": 1}, http.StatusCreated))
	id := fmt.Sprint(conv.ID)
	next := func(method, path string, body any) wt.Conversation {
		t.Helper()
		erika.Must(method, path, body, http.StatusAccepted)
		e.App.Chat.Wait()
		return wt.Decode[wt.Conversation](t, erika.Must("GET", "/api/conversations/"+id, nil, 200))
	}
	conv = next("POST", "/api/conversations/"+id+"/messages", map[string]any{"content": "Bitte SEO optimieren"})
	card := conv.Card
	if card == nil || fmt.Sprint(card.Answers) != "[apply variant skip keep]" {
		t.Fatalf("first card: %+v", conv)
	}
	if tour := conv.Tour; tour.PageTitle != "About" {
		t.Errorf("tour = %+v", tour)
	}
	conv = next("POST", "/api/conversations/"+id+"/answer", map[string]any{"turnDigest": card.TurnDigest, "answer": "skip"})
	points := wt.Decode[wt.OpenPoints](t, erika.Must("GET", "/api/pages/2/open-points", nil, 200)).OpenPoints
	if len(points) != 1 {
		t.Fatalf("open points after skip: %+v", points)
	}
	card = conv.Card
	conv = next("POST", "/api/conversations/"+id+"/answer", map[string]any{"turnDigest": card.TurnDigest, "answer": "apply"})
	if out := conv.Outcomes; len(out) != 2 || out[1].Outcome != "applied" {
		t.Fatalf("outcomes = %+v", out)
	}
}

// TestDemoLoginsDescribeEachEditorsRights holds the demo's logins to what
// they say: erika edits the website except the Services
// branch, which she may only read — a tour there does not even begin —
// and max edits the German pages of the Services branch.
func TestDemoLoginsDescribeEachEditorsRights(t *testing.T) {
	db := storetest.SQLite(t)
	e := wt.New(t, db, string(demo.Fixture), nil)
	tour := func(token string, page, language int) wt.Conversation {
		t.Helper()
		c := e.As(token)
		conv := wt.Decode[wt.Conversation](t, c.Must("POST", "/api/conversations", map[string]any{"page": page, "language": language, "skill": 1}, http.StatusCreated))
		id := fmt.Sprint(conv.ID)
		c.Must("POST", "/api/conversations/"+id+"/messages", map[string]any{"content": "Bitte SEO optimieren"}, http.StatusAccepted)
		e.App.Chat.Wait()
		return wt.Decode[wt.Conversation](t, c.Must("GET", "/api/conversations/"+id, nil, 200))
	}
	if r := e.As("demo-token-erika").Do("POST", "/api/conversations", map[string]any{"page": 5, "language": 0, "skill": 1}); r.Status != http.StatusConflict || r.ErrorCode() != "page_read_only" {
		t.Errorf("erika's tour on Consulting (Services branch, read only) = %d %s, want 409 page_read_only", r.Status, r.Body)
	}
	var n int
	_ = db.QueryRow(context.Background(), "SELECT COUNT(*) FROM record_history").Scan(&n)
	if n != 0 {
		t.Errorf("%d history rows after erika's tour on a page she may only read", n)
	}
	if conv := tour("demo-token-max", 14, 1); conv.Card == nil {
		t.Errorf("max on Webentwicklung (German, Services branch) got no card: %+v", conv)
	}
	if conv := tour("demo-token-erika", 2, 0); conv.Card == nil {
		t.Errorf("erika on About got no card: %+v", conv)
	}
	for _, l := range demo.Logins() {
		if l.Username == "erika" && !strings.Contains(l.Role, "Services") {
			t.Errorf("erika's login says %q: it must say she may only read the Services branch", l.Role)
		}
	}
}

// TestDemoFourEyesConfigurationIsReachableFromTheChat: the demo's four-eyes
// configuration can be chosen for a conversation; its
// card waits for a second person: it is in paula's inbox, and erika cannot
// release it herself.
func TestDemoFourEyesConfigurationIsReachableFromTheChat(t *testing.T) {
	db := storetest.SQLite(t)
	e := wt.New(t, db, string(demo.Fixture), nil)
	erika, paula := e.As("demo-token-erika"), e.As("demo-token-paula")
	conv := wt.Decode[wt.Conversation](t, erika.Must("POST", "/api/conversations", map[string]any{"page": 2, "language": 0, "configuration": 2}, http.StatusCreated))
	id := fmt.Sprint(conv.ID)
	erika.Must("POST", "/api/conversations/"+id+"/messages", map[string]any{"content": "SEO optimieren für Seite 2"}, http.StatusAccepted)
	e.App.Chat.Wait()
	conv = wt.Decode[wt.Conversation](t, erika.Must("GET", "/api/conversations/"+id, nil, 200))
	card := conv.Card
	if card == nil || card.ApproveBlocked != "second_approver" {
		t.Fatalf("the four-eyes card = %+v", conv)
	}
	inbox := wt.Decode[wt.Inbox](t, paula.Must("GET", "/api/inbox", nil, 200))
	if len(inbox.Runs) != 1 {
		t.Fatalf("paula's inbox = %+v", inbox)
	}
	if r := erika.Do("POST", "/api/conversations/"+id+"/answer", map[string]any{"turnDigest": card.TurnDigest, "answer": "approve"}); r.Status != http.StatusConflict {
		t.Errorf("erika releasing her own four-eyes card = %d %s, want 409", r.Status, r.Body)
	}
}
