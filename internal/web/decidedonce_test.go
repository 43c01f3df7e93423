package web_test

import (
	"context"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"

	"waymark/internal/agent"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// A decision the runtime had taken before its job carried it out — an
// attempt whose commit was reported failed as the database went away had
// landed, or the job handed back to the workers after a lease in an outage
// ran beside the one still waiting it out — is the editor's own: its card
// is settled once, with no "decided elsewhere" notice, and the tour goes on
// to its next card. Before, the job took the runtime's refusal (the run no
// longer waits) for a decision taken elsewhere: it recorded no outcome
// (the answer was lost) or, while the run still went on, followed it with
// a notice, and the run's end recorded the card a second time.
func TestADecisionTheRuntimeTookBeforeItsJobIsSettledOnceAsTheEditorsOwn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var e *wt.Env
		var landed atomic.Pointer[func()]
		e = wt.New(t, db, site, &wt.Options{BeforeClaim: func(op string) {
			if f := landed.Swap(nil); op == "answer" && f != nil {
				(*f)()
			}
		}})
		e.LLM.Add(
			write("c1", `{"description": "Erste Fassung"}`),
			write("c2", `{"seoTitle": "Zweite Fassung"}`),
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p1", Name: "set_progress", Arguments: `{"current": 2, "total": 2, "completed": true}`}}},
			say("Fertig."))
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", seo)
		id, _ := strconv.ParseInt(convPath.FindStringSubmatch(path)[1], 10, 64)
		ctx := context.Background()
		v, err := e.App.Chat.Get(ctx, 2, id)
		if err != nil || v.Card == nil {
			t.Fatalf("the tour's first card: %+v, %v", v, err)
		}
		// Right before the claim of the editor's answer, the same decision
		// reaches the runtime (the landed attempt, the twin job).
		f := func() {
			if _, err := e.App.Runtime.Approve(ctx, 2, v.Card.RunUUID, agent.Decision{TurnDigest: v.Card.TurnDigest, Reason: agent.DenySkip}); err != nil {
				t.Errorf("the decision's landed attempt: %v", err)
			}
		}
		landed.Store(&f)
		if a := b.post(path+"/answer", url.Values{"turnDigest": {v.Card.TurnDigest}, "answer": {"skip"}}); a.Status >= 300 {
			t.Fatalf("answer = %d %s", a.Status, a.Body)
		}
		e.App.Chat.Wait()
		after, err := e.App.Chat.Get(ctx, 2, id)
		if err != nil {
			t.Fatal(err)
		}
		if after.Card == nil || after.Card.TurnDigest == v.Card.TurnDigest {
			t.Errorf("after the answer: status %s, card %+v; want the tour's next card", after.Status, after.Card)
		}
		var outcomes, notices int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM conversation_outcomes WHERE conversation_id = ? AND run_uuid = ?", id, v.Card.RunUUID).Scan(&outcomes); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM conversation_messages WHERE conversation_id = ? AND notice LIKE '%elsewhere%'", id).Scan(&notices); err != nil {
			t.Fatal(err)
		}
		if outcomes != 1 || notices != 0 {
			t.Errorf("%d outcomes of the card, %d notices of a decision taken elsewhere; want 1 and 0", outcomes, notices)
		}
	})
}
