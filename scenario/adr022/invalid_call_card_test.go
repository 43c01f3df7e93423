package adr022_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// An invalid or injected write call (here an unknown property) became an
// empty card in the chat with four answers and no reason. The card now
// carries the preview error the runs API shows, the web card shows it in
// the editor's language, and it offers only the answers that make sense:
// no Übernehmen — an apply is refused 409 cannot_apply and changes nothing —
// while Überspringen still moves the tour on.
func TestInvalidWriteCallCardCarriesItsPreviewErrorAndOffersNoApply(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "update_page_metadata",
			Arguments: `{"page": 1, "fields": {"description": "injected"}, "bogus": true}`}}}, answer("Weiter."))
		erika := e.As(wt.Erika)
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		if conv.Card == nil || len(conv.Card.Calls) != 1 {
			t.Fatalf("conversation = %+v, want a card with the call", conv)
		}
		call := conv.Card.Calls[0]
		if call.PreviewError == "" || !strings.Contains(call.PreviewError, "bogus") {
			t.Errorf("card call = %+v, want the preview error naming the unknown property", call)
		}
		if want := []string{"variant", "skip", "keep"}; !slices.Equal(conv.Card.Answers, want) {
			t.Errorf("card answers = %v, want %v (no apply)", conv.Card.Answers, want)
		}
		// The runs API says the same.
		var waiting string
		if err := db.QueryRow(t.Context(), `SELECT uuid FROM runs WHERE status = 'waiting_for_approval'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if st := erika.MustRun(waiting); st.Pending == nil || st.Pending.Calls[0].PreviewError != call.PreviewError {
			t.Errorf("run's pending call = %+v, want the card's preview error %q", st.Pending, call.PreviewError)
		}
		// The web card shows it, in German for erika, and has no Übernehmen button.
		page := erika.Do("GET", fmt.Sprintf("/chat/%d", conv.ID), nil)
		html := string(page.Body)
		if page.Status != http.StatusOK || !strings.Contains(html, "Dieser Vorschlag kann nicht übernommen werden: ") || !strings.Contains(html, "bogus") {
			t.Errorf("web card = %d, want the preview error shown: %s", page.Status, html)
		}
		if strings.Contains(html, `value="apply"`) || !strings.Contains(html, `value="skip"`) {
			t.Errorf("web card answers: want Überspringen and no Übernehmen")
		}
		r := erika.AnswerConversation(conv.ID, wt.Answer{TurnDigest: conv.Card.TurnDigest, Answer: "apply"})
		if r.Status != http.StatusConflict || r.ErrorCode() != "cannot_apply" {
			t.Fatalf("apply = %d %s, want 409 cannot_apply", r.Status, r.Body)
		}
		if again := current(t, e, erika, conv.ID); again.Card == nil || again.Card.TurnDigest != conv.Card.TurnDigest {
			t.Fatalf("after the refused apply: %+v, want the same card waiting", again)
		}
		conv = decided(t, e, erika, conv, "skip")
		if conv.Status != "idle" {
			t.Errorf("after skip: %+v, want idle", conv)
		}
		var fields string
		if err := db.QueryRow(t.Context(), `SELECT fields FROM records WHERE tbl = 'pages' AND uid = 1`).Scan(&fields); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(fields, "injected") {
			t.Errorf("page fields %s: the invalid call was written", fields)
		}
	})
}

// An answer of the other card kind — apply on a plain approve/cancel card,
// approve on a process card — is an option the card does not offer: 400
// bad_request, as documented, and nothing changes (it was 409 cannot_apply,
// whose message said the proposal could not be applied — false: the card's
// own approve applies it). The card's own answer still works afterwards.
func TestAnApplyOnAnApproveCancelCardIsABadRequestAndChangesNothing(t *testing.T) {
	for _, c := range []struct {
		name           string
		skill          int64
		wrong, right   string
		wantAnswers    string
		wantOutcome    string
		wantTranscript string
	}{
		{"apply on a plain card", tone, "apply", "approve", "[approve cancel]", "applied", "Freigeben"},
		{"approve on a process card", seo, "approve", "apply", "[apply variant skip keep]", "applied", "Übernehmen"},
	} {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db)
				e.LLM.Add(write("c1", `{"description": "first"}`), answer("Erledigt."))
				erika := e.As(wt.Erika)
				conv := said(t, e, erika, opened(t, erika, c.skill).ID, "Los")
				if conv.Card == nil || fmt.Sprint(conv.Card.Answers) != c.wantAnswers {
					t.Fatalf("card = %+v, want the answers %s", conv.Card, c.wantAnswers)
				}
				r := erika.AnswerConversation(conv.ID, wt.Answer{TurnDigest: conv.Card.TurnDigest, Answer: c.wrong})
				if r.Status != http.StatusBadRequest || r.ErrorCode() != "bad_request" || !strings.Contains(string(r.Body), c.wrong) {
					t.Fatalf("%s = %d %s, want 400 bad_request naming the answer", c.wrong, r.Status, r.Body)
				}
				same := current(t, e, erika, conv.ID)
				if same.Status != "awaiting_approval" || same.Card == nil || same.Card.TurnDigest != conv.Card.TurnDigest || len(same.Messages) != len(conv.Messages) {
					t.Fatalf("after the refused answer: %+v, want the card waiting as before", same)
				}
				done := decided(t, e, erika, same, c.right)
				if done.Status != "idle" || len(done.Outcomes) != 1 || done.Outcomes[0].Outcome != c.wantOutcome {
					t.Fatalf("after %s: %+v", c.right, done)
				}
			})
		})
	}
}
