package mcp

import (
	"context"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/access"
	"waymark/internal/catalog"
	"waymark/internal/chat"
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
func (s *Server) elicit(ctx context.Context, req *sdk.CallToolRequest, a *access.Actor, v chat.View) (result, error) {
	t := catalog.For(a.BackendLanguage)
	for {
		var err error
		switch {
		case v.Status == chat.AwaitingApproval && v.Card != nil:
			if len(v.Card.Answers) == 0 || v.Card.ApproveBlocked != "" {
				r := s.viewResult(a, v)
				r.text = t.Get("card.fourEyes") + "\n\n" + r.text
				return r, nil
			}
			res, eerr := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: cardMessage(t, v), RequestedSchema: cardSchema(t, v.Card)})
			if eerr != nil {
				return s.viewResult(a, v), errInvalid.With("elicitation: %v", eerr)
			}
			answer, _ := res.Content["answer"].(string)
			if res.Action != "accept" {
				return s.waiting(a, v, res.Action), nil
			}
			err = s.d.Chat.Answer(ctx, a.UID, v.ID, v.Card.TurnDigest, answer)
		case v.Status == chat.AwaitingInput && v.Question != nil:
			res, eerr := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: v.Question.Question, RequestedSchema: questionSchema(t, v.Question)})
			if eerr != nil {
				return s.viewResult(a, v), errInvalid.With("elicitation: %v", eerr)
			}
			if res.Action != "accept" {
				return s.waiting(a, v, res.Action), nil
			}
			option, _ := res.Content["option"].(string)
			text, _ := res.Content["text"].(string)
			err = s.d.Chat.AnswerQuestion(ctx, a.UID, v.ID, v.Question.TurnDigest, option, text)
		default:
			return s.viewResult(a, v), nil
		}
		if err != nil {
			return result{}, err
		}
		if v, err = s.d.Chat.Get(ctx, a.UID, v.ID); err != nil {
			return result{}, err
		}
		if v, err = s.settleView(ctx, req, a, v); err != nil {
			return result{}, err
		}
	}
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

// cardSchema offers exactly the answers the card offers, titled in the
// user's backend language.
func cardSchema(t catalog.T, c *chat.Card) map[string]any {
	options := []map[string]any{}
	for _, a := range c.Answers {
		options = append(options, map[string]any{"const": a, "title": t.Get("answer." + a)})
	}
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"answer": map[string]any{"type": "string", "title": t.Get("card.answerLegend"), "oneOf": options}},
		"required":   []string{"answer"},
	}
}

// questionSchema offers the question's options and, when it takes one, an
// answer in the user's own words.
func questionSchema(t catalog.T, q *chat.Question) map[string]any {
	props := map[string]any{}
	var required []string
	if len(q.Options) > 0 {
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
