package adr022_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// claimHook is the chat's BeforeClaim of one environment (chat.Deps): what
// it runs is set by hookOnce.
type claimHook struct {
	f atomic.Pointer[func(op string)]
}

func (h *claimHook) run(op string) {
	if f := h.f.Load(); f != nil {
		(*f)(op)
	}
}

// newRaceEnv is newEnv with a claim hook for hookOnce.
func newRaceEnv(t *testing.T, db *store.DB) (*wt.Env, *claimHook) {
	t.Helper()
	h := &claimHook{}
	return wt.New(t, db, site, &wt.Options{BeforeClaim: h.run}), h
}

// hookOnce lands f once, in the request op, right before its claim.
func hookOnce(t *testing.T, h *claimHook, op string, f func()) {
	t.Helper()
	var once sync.Once
	g := func(got string) {
		if got == op {
			once.Do(f)
		}
	}
	h.f.Store(&g)
	t.Cleanup(func() { h.f.Store(nil) })
}

// approvalsOf counts the run's decisions on the turn digest and its tool
// calls with callID that ran without error: what was executed.
func approvalsOf(t *testing.T, c *wt.Client, run string, digest string, callID string) (decisions, executed int) {
	t.Helper()
	evs := wt.Decode[wt.Events](t, c.Must("GET", "/api/runs/"+run+"/events?after=0", nil, 200)).Events
	for _, ev := range evs {
		switch ev.Kind {
		case "approval":
			// A decision carries approved (present, not null).
			if p := wt.Payload[wt.ApprovalPayload](t, ev); p.TurnDigest == digest && p.Approved != nil {
				decisions++
			}
		case "tool":
			// Executed: isError present and false.
			if p := wt.Payload[wt.ToolPayload](t, ev); p.CallID == callID && p.IsError != nil && !*p.IsError {
				executed++
			}
		}
	}
	return decisions, executed
}

// cardDigest is the turn digest of the conversation's waiting card.
func cardDigest(t *testing.T, conv wt.Conversation) string {
	t.Helper()
	if conv.Card == nil {
		t.Fatalf("conversation %d has no card: %+v", conv.ID, conv)
	}
	return conv.Card.TurnDigest
}

func transcriptHas(conv wt.Conversation, content string) int {
	n := 0
	for _, m := range conv.Messages {
		if m.Content == content {
			n++
		}
	}
	return n
}

// A message that arrives while an answer is being accepted
// (the answer claims the conversation first) answers 409 and changes
// nothing: no cancel, no notice, no failed conversation; the answer is
// executed once.
func TestMessageLosingTheClaimToAnAnswerChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, hook := newRaceEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "the accepted answer"}`), answer("Erledigt."))
		erika := e.As(wt.Erika)
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		id, digest, run := itoa(float64(conv.ID)), cardDigest(t, conv), pendingRun(t, erika)
		answered := 0
		hookOnce(t, hook, "message", func() {
			answered = erika.Do("POST", "/api/conversations/"+id+"/answer", map[string]any{"turnDigest": digest, "answer": "apply"}).Status
		})
		r := erika.Do("POST", "/api/conversations/"+id+"/messages", map[string]any{"content": "Lieber nicht"})
		if answered != http.StatusAccepted || r.Status != http.StatusConflict {
			t.Fatalf("answer = %d, message = %d %s; want 202 and 409", answered, r.Status, r.Body)
		}
		got := current(t, e, erika, conv.ID)
		if got.Status != "idle" || lastNotice(got) != "" || transcriptHas(got, "Lieber nicht") != 0 {
			t.Errorf("after the race: status %v, notice %q, messages %v", got.Status, lastNotice(got), got.Messages)
		}
		st := erika.MustRun(run)
		if d, x := approvalsOf(t, erika, run, digest, "c1"); st.Status != "completed" || d != 1 || x != 1 {
			t.Errorf("the answered run = %v, %d decisions, %d executions; want completed, 1, 1", st.Status, d, x)
		}
	})
}

// An answer that arrives while a new message withdraws the
// card (the message claims first) answers 409 stale_card and changes
// nothing; the message lands and nothing is written.
func TestAnswerLosingTheClaimToAMessageChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, hook := newRaceEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "never written"}`), answer("Gut, anders."))
		erika := e.As(wt.Erika)
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		id, digest, run := itoa(float64(conv.ID)), cardDigest(t, conv), pendingRun(t, erika)
		sent := 0
		hookOnce(t, hook, "answer", func() {
			sent = erika.Do("POST", "/api/conversations/"+id+"/messages", map[string]any{"content": "Lieber anders"}).Status
		})
		r := erika.Do("POST", "/api/conversations/"+id+"/answer", map[string]any{"turnDigest": digest, "answer": "apply"})
		if sent != http.StatusAccepted || r.Status != http.StatusConflict || r.ErrorCode() != "stale_card" {
			t.Fatalf("message = %d, answer = %d %s; want 202 and 409 stale_card", sent, r.Status, r.Body)
		}
		got := current(t, e, erika, conv.ID)
		if got.Status != "idle" || transcriptHas(got, "Übernehmen") != 0 || transcriptHas(got, "Lieber anders") != 1 {
			t.Errorf("after the race: status %v, messages %v", got.Status, got.Messages)
		}
		st := erika.MustRun(run)
		if d, x := approvalsOf(t, erika, run, digest, "c1"); st.Status != "cancelled" || d != 0 || x != 0 {
			t.Errorf("the withdrawn run = %v, %d decisions, %d executions; want cancelled, 0, 0", st.Status, d, x)
		}
		if strings.Contains(description(t, db), "never written") {
			t.Error("the withdrawn proposal was written")
		}
	})
}

// End-tour races an answer in both orders; the loser of the
// claim answers 409 and changes nothing.
func TestEndTourAndAnswerRacingForTheClaim(t *testing.T) {
	t.Run("answer first", func(t *testing.T) {
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			e, hook := newRaceEnv(t, db)
			e.LLM.Add(write("c1", `{"description": "applied"}`), answer("Erledigt."))
			erika := e.As(wt.Erika)
			conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
			id, digest, run := itoa(float64(conv.ID)), cardDigest(t, conv), pendingRun(t, erika)
			answered := 0
			hookOnce(t, hook, "end-tour", func() {
				answered = erika.Do("POST", "/api/conversations/"+id+"/answer", map[string]any{"turnDigest": digest, "answer": "apply"}).Status
			})
			r := erika.Do("POST", "/api/conversations/"+id+"/end-tour", nil)
			if answered != http.StatusAccepted || r.Status != http.StatusConflict {
				t.Fatalf("answer = %d, end-tour = %d %s; want 202 and 409", answered, r.Status, r.Body)
			}
			got := current(t, e, erika, conv.ID)
			st := erika.MustRun(run)
			if got.Status != "idle" || got.Skill == nil || st.Status != "completed" || !st.HoldsProcessIs(true) {
				t.Errorf("after the race: conversation %v skill %+v; run %v holdsProcess %v", got.Status, got.Skill, st.Status, st.HoldsProcess)
			}
		})
	})
	t.Run("end-tour first", func(t *testing.T) {
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			e, hook := newRaceEnv(t, db)
			e.LLM.Add(write("c1", `{"description": "never written"}`))
			erika := e.As(wt.Erika)
			conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
			id, digest := itoa(float64(conv.ID)), cardDigest(t, conv)
			ended := 0
			hookOnce(t, hook, "answer", func() {
				ended = erika.Do("POST", "/api/conversations/"+id+"/end-tour", nil).Status
			})
			r := erika.Do("POST", "/api/conversations/"+id+"/answer", map[string]any{"turnDigest": digest, "answer": "apply"})
			if ended != http.StatusOK || r.Status != http.StatusConflict || r.ErrorCode() != "stale_card" {
				t.Fatalf("end-tour = %d, answer = %d %s; want 200 and 409 stale_card", ended, r.Status, r.Body)
			}
			got := current(t, e, erika, conv.ID)
			if got.Status != "idle" || got.Skill != nil || transcriptHas(got, "Übernehmen") != 0 || strings.Contains(description(t, db), "never written") {
				t.Errorf("after the race: %+v", got)
			}
		})
	})
}

// 50 attempts, each racing an answer and a message on the
// same card in parallel: every accepted answer is executed exactly once,
// every message either lands or gets 409 with nothing changed, and the
// conversation never fails.
func TestAnswersAndMessagesRacingInParallelLoseNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const attempts = 50
		e := newEnv(t, db)
		// An answer that wins goes on in the same run: room for 50 rounds.
		if _, err := db.Exec(t.Context(), "UPDATE configurations SET max_iterations = 100 WHERE uid = 1"); err != nil {
			t.Fatal(err)
		}
		for k := 0; k <= 2*attempts; k++ {
			e.LLM.Add(write(fmt.Sprintf("w%d", k), fmt.Sprintf(`{"description": "value %d"}`, k)))
		}
		erika := e.As(wt.Erika)
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		id := itoa(float64(conv.ID))
		landed := map[string]int{}
		defer func() { t.Logf("of %d attempts: %v", attempts, landed) }()
		for i := range attempts {
			if conv.Status != "awaiting_approval" {
				t.Fatalf("attempt %d: conversation = %+v", i, conv)
			}
			digest := cardDigest(t, conv)
			if len(conv.Card.Calls) == 0 {
				t.Fatalf("attempt %d: card without calls: %+v", i, conv.Card)
			}
			callID := conv.Card.Calls[0].ID
			run := pendingRun(t, erika)
			text := fmt.Sprintf("Nachricht %d", i)
			var answered, sent wt.Response
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				answered = erika.Do("POST", "/api/conversations/"+id+"/answer", map[string]any{"turnDigest": digest, "answer": "apply"})
			}()
			go func() {
				defer wg.Done()
				sent = erika.Do("POST", "/api/conversations/"+id+"/messages", map[string]any{"content": text})
			}()
			wg.Wait()
			landed[fmt.Sprintf("answer %d, message %d", answered.Status, sent.Status)]++
			conv = current(t, e, erika, conv.ID)
			for what, r := range map[string]wt.Response{"answer": answered, "message": sent} {
				if r.Status != http.StatusAccepted && r.Status != http.StatusConflict {
					t.Fatalf("attempt %d: %s = %d %s", i, what, r.Status, r.Body)
				}
			}
			if answered.Status == http.StatusConflict && sent.Status == http.StatusConflict {
				t.Fatalf("attempt %d: both the answer and the message were refused", i)
			}
			d, x := approvalsOf(t, erika, run, digest, callID)
			if want := map[bool]int{true: 1, false: 0}[answered.Status == http.StatusAccepted]; d != want || x != want {
				t.Fatalf("attempt %d: answer %d, but %d decisions and %d executions of its call", i, answered.Status, d, x)
			}
			if want := map[bool]int{true: 1, false: 0}[sent.Status == http.StatusAccepted]; transcriptHas(conv, text) != want {
				t.Fatalf("attempt %d: message %d, but the transcript holds it %d times", i, sent.Status, transcriptHas(conv, text))
			}
			// The one notice a race may leave: the trace of a card a winning
			// message withdrew (in this attempt or an earlier one).
			if n := lastNotice(conv); n != "" && !strings.HasPrefix(n, "card_withdrawn") {
				t.Fatalf("attempt %d: the conversation shows the notice %q", i, n)
			}
		}
	})
}

// description is the stored fields of page 1.
func description(t *testing.T, db *store.DB) string {
	t.Helper()
	var fields string
	if err := db.QueryRow(t.Context(), "SELECT fields FROM records WHERE tbl = 'pages' AND uid = 1").Scan(&fields); err != nil {
		t.Fatal(err)
	}
	return fields
}
