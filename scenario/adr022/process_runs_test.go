package adr022_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// P.X1, P.X2: a conversation with a skill runs a guided process unless the
// skill is plain; then a write gets the process answers; a plain skill's
// write card offers approve and cancel.
func TestPX1_PX2_ProcessConversationsGetTheProcessAnswers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "first"}`), write("c2", `{"description": "second"}`))
		erika := e.As(wt.Erika)
		proc := opened(t, erika, seo)
		if proc.Skill == nil || !proc.Skill.Process || proc.Tour == nil {
			t.Fatalf("process conversation = %+v", proc)
		}
		proc = said(t, e, erika, proc.ID, "Los geht's")
		if proc.Status != "awaiting_approval" || proc.Card == nil || fmt.Sprint(proc.Card.Answers) != "[apply variant skip keep]" {
			t.Fatalf("process card = %+v", proc)
		}
		plain := opened(t, erika, tone)
		plain = said(t, e, erika, plain.ID, "Please improve")
		if plain.Status != "awaiting_approval" || plain.Card == nil || fmt.Sprint(plain.Card.Answers) != "[approve cancel]" {
			t.Fatalf("plain card = %+v", plain)
		}
	})
}

// A message while a turn is queued or running answers 409; an ordinary
// conversation leaves its waiting run alone and refuses the message.
func TestBusyConversationRefusesMessages(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "x"}`))
		erika := e.As(wt.Erika)
		plain := said(t, e, erika, opened(t, erika, tone).ID, "go")
		if r := erika.SendMessage(plain.ID, "more"); r.Status != 409 {
			t.Fatalf("message to a waiting ordinary conversation = %d %s", r.Status, r.Body)
		}
	})
}

// The chosen answer's label goes into the transcript; an applied proposal
// writes, and its outcome is read from the run's steps.
func TestApplyWritesAndRecordsTheOutcome(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "A new description"}`), answer("Erledigt."))
		erika := e.As(wt.Erika)
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		conv = decided(t, e, erika, conv, "apply")
		if conv.Status != "idle" {
			t.Fatalf("after apply: %+v", conv)
		}
		var labels []string
		for _, m := range conv.Messages {
			labels = append(labels, m.Content)
		}
		if fmt.Sprint(labels) != "[Los Übernehmen Erledigt.]" {
			t.Errorf("transcript = %v", labels)
		}
		out := conv.Outcomes
		if len(out) != 1 || out[0].Outcome != "applied" || out[0].Table != "pages" {
			t.Fatalf("outcomes = %+v", out)
		}
	})
}

// Starting checks the page, the language and the skill; a refused start creates nothing.
func TestRefusedStartsCreateNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		if _, err := db.Exec(t.Context(), `UPDATE configurations SET active = FALSE WHERE uid = 2`); err != nil {
			t.Fatal(err)
		}
		erika := e.As(wt.Erika)
		cases := []struct {
			name   string
			body   map[string]any
			status int
			code   string
		}{
			{"a page the editor may not show", map[string]any{"page": 999, "language": 0}, 404, "not_found"},
			{"a language the editor may not edit", map[string]any{"page": 1, "language": 7}, 403, "language_not_editable"},
			{"a skill outside the catalogue", map[string]any{"page": 1, "language": 0, "skill": 999}, 409, "skill_unavailable"},
			{"bad json", map[string]any{"page": "one"}, 400, "bad_request"},
		}
		for _, c := range cases {
			r := erika.Do("POST", "/api/conversations", c.body)
			if r.Status != c.status || r.ErrorCode() != c.code {
				t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
			}
		}
		var n int
		_ = db.QueryRow(t.Context(), "SELECT COUNT(*) FROM conversations").Scan(&n)
		if n != 0 {
			t.Errorf("refused starts created %d conversations", n)
		}
		if r := e.As(wt.Otto).Do("GET", "/api/conversations/1", nil); r.Status != 404 {
			t.Errorf("an unknown conversation = %d", r.Status)
		}
	})
}

// A process skill on a four-eyes configuration is refused with 409.
func TestProcessOnAFourEyesConfigurationIsRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		if _, err := db.Exec(t.Context(), `UPDATE configurations SET require_second_approver = TRUE`); err != nil {
			t.Fatal(err)
		}
		r := e.As(wt.Erika).Do("POST", "/api/conversations", map[string]any{"page": 1, "language": 0, "skill": seo})
		if r.Status != 409 || r.ErrorCode() != "second_approver_required" {
			t.Fatalf("process on four eyes = %d %s", r.Status, r.Body)
		}
	})
}

// Live updates: the stream sends the conversation as it changes.
func TestStreamSendsTheConversationAsItChanges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "x"}`))
		erika := e.As(wt.Erika)
		id := itoa(float64(opened(t, erika, seo).ID))
		req, _ := http.NewRequest("GET", e.URL+"/api/conversations/"+id+"/stream", nil)
		req.Header.Set("Authorization", "Bearer "+wt.Erika)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		statuses := []string{}
		sent := false
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatal(err)
			}
			statuses = append(statuses, v["status"].(string))
			if !sent {
				erika.Must("POST", "/api/conversations/"+id+"/messages", map[string]any{"content": "Los"}, http.StatusAccepted)
				sent = true
			}
			if v["status"] == "awaiting_approval" {
				break
			}
		}
		if len(statuses) < 2 || statuses[0] != "idle" || statuses[len(statuses)-1] != "awaiting_approval" {
			t.Fatalf("streamed statuses %v", statuses)
		}
	})
}
