package adr022_test

import (
	"net/http"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

func completion() llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p", Name: "set_progress", Arguments: `{"current": 1, "total": 1, "completed": true}`}}}
}

// wantNoFailureNotice fails when a message of the conversation carries a notice.
func wantNoFailureNotice(t *testing.T, conv map[string]any) {
	t.Helper()
	for _, m := range conv["messages"].([]any) {
		if n := m.(map[string]any)["notice"]; n != nil && n != "" {
			t.Errorf("the transcript shows the notice %q: %v", n, conv["messages"])
		}
	}
}

// Issue 11 item 1: a tour whose process reports completion in its first turn
// (the origin) completes: the turn gets its closing answer, the run ends
// completed, the conversation goes idle with its summary and shows no
// failure or process_ended notice; the process is let go.
func TestCompletedTourCompletes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "a"}`), completion(), answer("Fertig."))
		erika := e.As(wt.Erika)
		conv := decide(t, e, erika, send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los"), "apply")
		if conv["status"] != "idle" || conv["error"] != nil || conv["card"] != nil {
			t.Fatalf("after completion: status %v error %v card %v", conv["status"], conv["error"], conv["card"])
		}
		msgs := conv["messages"].([]any)
		if last := msgs[len(msgs)-1].(map[string]any); last["content"] != "Fertig." {
			t.Errorf("closing message = %v", last)
		}
		wantNoFailureNotice(t, conv)
		if sum, ok := conv["summary"].(map[string]any); !ok || sum["applied"] != 1.0 {
			t.Errorf("summary = %v", conv["summary"])
		}
		st := erika.Must("GET", "/api/runs/"+conv["lastRunUuid"].(string), nil, 200).Map(t)
		if st["status"] != "completed" || st["terminationReason"] != "completed" || st["holdsProcess"] != false {
			t.Errorf("the completed run = status %v, reason %v, holdsProcess %v", st["status"], st["terminationReason"], st["holdsProcess"])
		}
	})
}

// Issue 11 item 1: a completion reported in a later turn releases the
// process for every turn of the lineage, the origin included: a turn
// continued from the first turn holds no process.
func TestCompletedTourReleasesTheProcessForEveryTurnOfItsLineage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "a"}`), answer("Weiter?"),
			write("c2", `{"seoTitle": "b"}`), completion(), answer("Fertig."), answer("ohne Prozess"))
		erika := e.As(wt.Erika)
		conv := decide(t, e, erika, send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los"), "apply")
		origin := conv["lastRunUuid"].(string)
		if st := erika.Must("GET", "/api/runs/"+origin, nil, 200).Map(t); st["holdsProcess"] != true {
			t.Fatalf("the first turn = %v", st)
		}
		conv = decide(t, e, erika, send(t, e, erika, conv["id"].(float64), "Weiter"), "apply")
		if conv["status"] != "idle" {
			t.Fatalf("after completion: %v", conv)
		}
		wantNoFailureNotice(t, conv)
		if sum, ok := conv["summary"].(map[string]any); !ok || sum["applied"] != 2.0 {
			t.Errorf("summary = %v", conv["summary"])
		}
		last := erika.Must("GET", "/api/runs/"+conv["lastRunUuid"].(string), nil, 200).Map(t)
		if last["status"] != "completed" || last["terminationReason"] != "completed" || last["holdsProcess"] != false {
			t.Errorf("the completing turn = status %v, reason %v, holdsProcess %v", last["status"], last["terminationReason"], last["holdsProcess"])
		}
		if st := erika.Must("GET", "/api/runs/"+origin, nil, 200).Map(t); st["holdsProcess"] != false {
			t.Errorf("the origin still holds the process after completion: %v", st["holdsProcess"])
		}
		again := erika.Must("POST", "/api/runs", map[string]any{"configuration": 1, "predecessorRunUuid": origin,
			"messages": []map[string]string{{"role": "user", "content": "nochmal"}}}, http.StatusCreated).Map(t)
		if again["status"] != "completed" || again["holdsProcess"] != false {
			t.Errorf("a turn continued from the origin = status %v, holdsProcess %v", again["status"], again["holdsProcess"])
		}
	})
}
