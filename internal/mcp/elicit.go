package mcp

import (
	"context"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/access"
	"waymark/internal/catalog"
	"waymark/internal/chat"
	"waymark/internal/store"
)

// elicits reports whether the client declared the elicitation capability.
func elicits(req *sdk.CallToolRequest) bool {
	if req.Session == nil {
		return false
	}
	p := req.Session.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// elicit asks each card and question of the conversation as an
// elicitation form and answers it through the same guarded path as the web
// UI (chat.Answer, chat.AnswerQuestion), until the tour needs nothing from
// the user or ends. A declined or cancelled form leaves the card waiting and
// returns it; a four-eyes card (approve blocked: a second person must
// release it) is not asked of its requester — the tool returns saying so.
//
// A person may take minutes on a form: it stays open up to Config.FormWait
// even when the client gave up on the tool call meanwhile (its request
// timeout, notifications/cancelled), and an answer given then is carried
// out; the tour then stops asking — resume_tour asks the next card. Past
// FormWait the form is withdrawn and the card still waits.
func (s *Server) elicit(ctx context.Context, req *sdk.CallToolRequest, p *progress, a *access.Actor, v chat.View) (result, error) {
	t := catalog.For(a.BackendLanguage)
	legacy := legacyForms(req)
	for {
		var err error
		// The answer is carried out even when the call was given up: it
		// was decided by the user (CONVENTIONS: a decided write finishes).
		wctx := context.WithoutCancel(ctx)
		switch {
		case v.Status == chat.AwaitingApproval && v.Card != nil:
			if len(v.Card.Answers) == 0 || v.Card.ApproveBlocked != "" {
				r := s.viewResult(a, v)
				r.text = t.Get("card.fourEyes") + "\n\n" + r.text
				return r, nil
			}
			res, eerr := s.ask(ctx, req, p, &sdk.ElicitParams{Message: cardMessage(t, v), RequestedSchema: cardSchema(t, v.Card, legacy)})
			if eerr != nil {
				return s.formFailed(ctx, req, a, v, eerr), nil
			}
			answer, _ := res.Content["answer"].(string)
			if res.Action != "accept" {
				return s.waiting(a, v, res.Action), nil
			}
			err = s.d.Chat.Answer(wctx, a.UID, v.ID, v.Card.TurnDigest, answer)
		case v.Status == chat.AwaitingInput && v.Question != nil:
			res, eerr := s.ask(ctx, req, p, &sdk.ElicitParams{Message: v.Question.Question, RequestedSchema: questionSchema(t, v.Question)})
			if eerr != nil {
				return s.formFailed(ctx, req, a, v, eerr), nil
			}
			if res.Action != "accept" {
				return s.waiting(a, v, res.Action), nil
			}
			option, _ := res.Content["option"].(string)
			text, _ := res.Content["text"].(string)
			if err = store.CheckText(text); err == nil {
				err = s.d.Chat.AnswerQuestion(wctx, a.UID, v.ID, v.Question.TurnDigest, option, text)
			}
		default:
			return s.viewResult(a, v), nil
		}
		if ctx.Err() != nil {
			// The client gave up on the call while the form was open: the
			// answer is carried out (or refused, logged) and the tour
			// stops asking; resume_tour goes on with the next card.
			if err != nil {
				s.log.WarnContext(wctx, "mcp: a form answered after the client gave up on the call was refused", "conversation", v.ID, "err", err)
			} else {
				s.log.InfoContext(wctx, "mcp: a form answered after the client gave up on the call was carried out", "conversation", v.ID)
			}
			return result{}, ctx.Err()
		}
		if err != nil {
			return result{}, err
		}
		if v, err = s.d.Chat.Get(ctx, a.UID, v.ID); err != nil {
			return result{}, err
		}
		if v, err = s.settleView(ctx, p, a, v); err != nil {
			return result{}, err
		}
	}
}

// ask opens a form and waits for the user's answer at most FormWait, also
// after the call's own context ended (the client gave up on it). While the
// form is open and the call asked for progress, a progress notification
// goes out every FormProgress, so a client that resets its request timeout
// on progress keeps waiting.
func (s *Server) ask(ctx context.Context, req *sdk.CallToolRequest, p *progress, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // the client gave up before this form: no new form
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.formWait)
	defer cancel()
	if p.token != nil {
		done := make(chan struct{})
		defer close(done)
		go func() {
			tick := time.NewTicker(s.formProgress)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-ctx.Done():
					return // nobody waits for the call's progress any more
				case <-tick.C:
					p.notify(ctx, "waiting for the user's answer to the form")
				}
			}
		}()
	}
	return req.Session.Elicit(fctx, params)
}

// formFailed is the answer when a form could not be asked or its answer
// not read: the form was withdrawn after FormWait, the session ended, or
// the content did not match the form. The card or question still waits.
func (s *Server) formFailed(ctx context.Context, req *sdk.CallToolRequest, a *access.Actor, v chat.View, err error) result {
	s.log.InfoContext(ctx, "mcp: form not answered", "tool", req.Params.Name, "conversation", v.ID, "err", err)
	r := s.viewResult(a, v)
	r.text = "The form was not answered (" + err.Error() + "); the conversation still waits for an answer: answer it with answer_card or answer_question, or ask it again with resume_tour.\n\n" + r.text
	return r
}

// waiting is the answer when the user declined or cancelled a form: the
// card or question still waits, as the conversation shows.
func (s *Server) waiting(a *access.Actor, v chat.View, action string) result {
	r := s.viewResult(a, v)
	r.text = "The user chose " + action + "; the conversation still waits for an answer.\n\n" + r.text
	return r
}

// cardMessage is a card as the form's message: page and language, then per
// call its heading and each field with the current and the proposed value
// and the proposal's length against the recommended range.
func cardMessage(t catalog.T, v chat.View) string {
	var b strings.Builder
	if v.Tour != nil {
		b.WriteString(v.Tour.PageTitle)
		if v.Tour.LanguageName != "" {
			b.WriteString(" (" + v.Tour.LanguageName + ")")
		}
		b.WriteString("\n")
	}
	writeCard(&b, t, v.Card)
	return strings.TrimSpace(b.String())
}

// legacyForms reports whether the session negotiated a protocol version
// before 2025-11-25, whose forms title their choices with enumNames rather
// than a titled oneOf.
func legacyForms(req *sdk.CallToolRequest) bool {
	if req.Session == nil {
		return false
	}
	p := req.Session.InitializeParams()
	return p != nil && p.ProtocolVersion != "" && p.ProtocolVersion < "2025-11-25"
}

// cardSchema offers exactly the answers the card offers, titled in the
// user's backend language: a titled oneOf (2025-11-25 on), or enum with
// enumNames for a session of an earlier version (2025-06-18).
func cardSchema(t catalog.T, c *chat.Card, legacy bool) map[string]any {
	answer := map[string]any{"type": "string", "title": t.Get("card.answerLegend")}
	if legacy {
		names := []string{}
		for _, a := range c.Answers {
			names = append(names, t.Get("answer."+a))
		}
		answer["enum"], answer["enumNames"] = append([]string{}, c.Answers...), names
	} else {
		options := []map[string]any{}
		for _, a := range c.Answers {
			options = append(options, map[string]any{"const": a, "title": t.Get("answer." + a)})
		}
		answer["oneOf"] = options
	}
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"answer": answer},
		"required":   []string{"answer"},
	}
}

// questionSchema offers the question's options and, when it takes one, an
// answer in the user's own words.
func questionSchema(t catalog.T, q *chat.Question) map[string]any {
	props := map[string]any{}
	var required []string
	if len(q.Options) > 0 {
		// The options are their own titles: an untitled enum, valid in
		// every version.
		props["option"] = map[string]any{"type": "string", "title": t.Get("input.legend"), "enum": q.Options}
		if !q.FreeText {
			required = append(required, "option")
		}
	}
	if q.FreeText {
		props["text"] = map[string]any{"type": "string", "title": t.Get("input.ownWords")}
		if len(q.Options) == 0 {
			required = append(required, "text")
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}
