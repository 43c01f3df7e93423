package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"waymark/internal/access"
	"waymark/internal/chat"
	"waymark/internal/fault"
	"waymark/internal/serp"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// CardFilter narrows a campaign's review list; zero fields match all.
type CardFilter struct {
	Page   int64  // a page uid
	Field  string // a field a card changes (description, seoTitle …)
	Kind   string // the tool of the card's call (update_page_metadata, update_content)
	Offset int
	Limit  int // 1 to MaxCardLimit; 0: DefaultCardLimit
}

// Limits of the review list.
const (
	DefaultCardLimit = 50
	MaxCardLimit     = 200
	// MaxAnswers is how many cards one answer may name.
	MaxAnswers = 200
	// MaxInstruction is the longest instruction of a variant, in characters:
	// the chat's own limit, which each card's answer passes through.
	MaxInstruction = chat.MaxInstruction
)

// Card is one waiting card of a campaign's review list: the card its
// page's tour waits for, as the chat shows it.
type Card struct {
	Conversation   int64       `json:"conversation"`
	TurnDigest     string      `json:"turnDigest"`
	Page           int64       `json:"page"`
	Language       int64       `json:"language"`
	PageTitle      string      `json:"pageTitle"`
	Kind           string      `json:"kind"`
	Table          string      `json:"table"`
	UID            int64       `json:"uid"`
	Answers        []string    `json:"answers"`
	ApproveBlocked string      `json:"approveBlocked"`
	Fields         []CardField `json:"fields"`
	PreviewError   string      `json:"previewError,omitempty"`
	// SearchPreview is the page's search result with the proposed values
	// (the first call's that changes a title or description), as the
	// chat's card carries it.
	SearchPreview *serp.Preview   `json:"searchPreview,omitempty"`
	Calls         []chat.CardCall `json:"-"`
}

// CardField is one field a card changes: its current and proposed value and
// the proposal's length against the field's recommended range.
type CardField struct {
	Field    string        `json:"field"`
	Label    string        `json:"label"`
	Current  string        `json:"current"`
	Proposed string        `json:"proposed"`
	Measure  *tool.Measure `json:"measure,omitempty"`
}

// CardPage is one page of the review list.
type CardPage struct {
	Cards  []Card `json:"cards"`
	Total  int    `json:"total"` // cards matching the filter
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// Cards lists the waiting cards of campaign id, in page-tree order, for its
// owner or an administrator.
func (s *Service) Cards(ctx context.Context, a *access.Actor, id int64, f CardFilter) (CardPage, error) {
	if err := f.check(); err != nil {
		return CardPage{}, err
	}
	r, err := s.visible(ctx, a, id)
	if err != nil {
		return CardPage{}, err
	}
	return s.cards(ctx, r, f)
}

// Review is Get and Cards in one: the campaign with its counts and one
// page of its review list, its waiting tours read once for both.
func (s *Service) Review(ctx context.Context, a *access.Actor, id int64, f CardFilter) (View, CardPage, error) {
	if err := f.check(); err != nil {
		return View{}, CardPage{}, err
	}
	r, err := s.visible(ctx, a, id)
	if err != nil {
		return View{}, CardPage{}, err
	}
	page, err := s.cards(ctx, r, f)
	if err != nil {
		return View{}, CardPage{}, err
	}
	v, err := s.view(ctx, r)
	return v, page, err
}

// check sets the default limit and refuses a limit or offset out of range.
func (f *CardFilter) check() error {
	if f.Limit == 0 {
		f.Limit = DefaultCardLimit
	}
	if f.Limit < 1 || f.Limit > MaxCardLimit {
		return fmt.Errorf("%w: limit: want 1 to %d", ErrInvalid, MaxCardLimit)
	}
	if f.Offset < 0 {
		return fmt.Errorf("%w: offset: want 0 or more", ErrInvalid)
	}
	return nil
}

// cards settles r's waiting tours and lists the cards of the page f asks for.
// The filters and the total are read from the cards as their conversations
// store them, in the statement that also finds the tours that moved on;
// only the cards of the page asked for are read in full (the chat's read,
// which also reconciles them), so that a page of the list costs the same
// whether the campaign waits on 20 cards or on 1,000. Without a filter by
// kind or field no stored card is read at all.
func (s *Service) cards(ctx context.Context, r row, f CardFilter) (CardPage, error) {
	filtered := f.Kind != "" || f.Field != ""
	items, err := s.waiting(ctx, r, f.Page, filtered)
	if err != nil {
		return CardPage{}, err
	}
	match := func(c Card) bool {
		return (f.Kind == "" || c.Kind == f.Kind) && (f.Field == "" || slices.ContainsFunc(c.Fields, func(x CardField) bool { return x.Field == f.Field }))
	}
	out := CardPage{Cards: []Card{}, Offset: f.Offset, Limit: f.Limit}
	for _, it := range items {
		var read *chat.View // the chat's read of a tour that moved on
		if it.movedOn {
			v, gone, err := s.settleItem(ctx, r, it.item)
			if err != nil {
				return CardPage{}, err
			}
			if gone || v.Status != chat.AwaitingApproval || v.Card == nil {
				continue
			}
			read, it.hasCard, it.card = &v, true, v.Card
		}
		if !it.hasCard || filtered && (it.card == nil || !match(cardOf(it.item, chat.View{Card: it.card}))) {
			continue
		}
		if out.Total >= f.Offset && len(out.Cards) < f.Limit {
			if read == nil {
				v, err := s.d.Chat.Get(ctx, r.Owner, it.Conversation)
				if err != nil {
					if refused(err) {
						continue
					}
					return CardPage{}, err
				}
				read = &v
			}
			if read.Status != chat.AwaitingApproval || read.Card == nil {
				continue // it moved on since the statement above
			}
			c := cardOf(it.item, *read)
			if !match(c) {
				continue
			}
			out.Cards = append(out.Cards, c)
		}
		out.Total++
	}
	return out, nil
}

// waitingItem is an item with proposals as the statement of waiting read
// it: whether its tour moved on (its conversation no longer waits as
// stored, or waits on a run that no longer waits), whether the
// conversation stores a card it waits on, and that card when asked for
// (nil when unreadable).
type waitingItem struct {
	item
	movedOn, hasCard bool
	card             *chat.Card
}

// waiting reads r's items with proposals (of one page when page is not 0),
// in page-tree order, with their cards when withCards.
func (s *Service) waiting(ctx context.Context, r row, page int64, withCards bool) ([]waitingItem, error) {
	card := "''"
	if withCards {
		card = "c.card"
	}
	q, args := "SELECT "+prefixed("i.", itemColumns)+`,
		CASE WHEN c.id IS NULL OR c.status NOT IN ('awaiting_approval', 'awaiting_input')
			OR u.uuid IS NULL AND c.pending_run_uuid <> '' OR u.status NOT IN ('waiting_for_approval', 'waiting_for_input') THEN 1 ELSE 0 END,
		CASE WHEN c.status = 'awaiting_approval' AND octet_length(c.card) > 0 THEN 1 ELSE 0 END, `+card+`
		FROM campaign_items i
		LEFT JOIN conversations c ON c.id = i.conversation_id
		LEFT JOIN runs u ON u.uuid = c.pending_run_uuid
		WHERE i.campaign_id = ? AND i.state = ?`, []any{r.ID, string(ItemProposals)}
	if page != 0 {
		q, args = q+" AND i.page_uid = ?", append(args, page)
	}
	return store.Collect(ctx, s.d.DB, scanWaitingItem, q+" ORDER BY i.position, i.language", args...)
}

func scanWaitingItem(sc store.Scanner) (waitingItem, error) {
	var it waitingItem
	var state, card string
	var movedOn, hasCard int
	if err := sc.Scan(&it.ID, &it.Campaign, &it.Page, &it.Language, &it.Conversation, &state, &it.Reason, &it.StartedAt,
		&movedOn, &hasCard, &card); err != nil {
		return waitingItem{}, err
	}
	it.State = ItemState(state)
	it.movedOn, it.hasCard = movedOn == 1, hasCard == 1
	if it.hasCard && card != "" {
		var c chat.Card
		if json.Unmarshal([]byte(card), &c) == nil {
			it.card = &c
		}
	}
	return it, nil
}

func cardOf(it item, v chat.View) Card {
	c := Card{Conversation: v.ID, TurnDigest: v.Card.TurnDigest, Page: it.Page, Language: it.Language,
		Answers: v.Card.Answers, ApproveBlocked: v.Card.ApproveBlocked, Fields: []CardField{}, Calls: v.Card.Calls}
	if v.Tour != nil {
		c.PageTitle = v.Tour.PageTitle
	}
	for _, call := range v.Card.Calls {
		if c.Kind == "" {
			c.Kind = call.Tool
			if call.Target != nil {
				c.Table, c.UID = call.Target.Table, call.Target.UID
			}
		}
		if call.SearchPreview != nil && c.SearchPreview == nil {
			c.SearchPreview = call.SearchPreview
		}
		if call.PreviewError != "" && c.PreviewError == "" {
			c.PreviewError = call.PreviewError
		}
		for _, p := range call.Preview {
			c.Fields = append(c.Fields, CardField{Field: p.Field, Label: p.Label, Current: p.Current, Proposed: p.Proposed, Measure: p.Measure})
		}
	}
	return c
}

// CardRef names a card as the review list showed it.
type CardRef struct {
	Conversation int64  `json:"conversation"`
	TurnDigest   string `json:"turnDigest"`
}

// Answers is one answer to several cards of a campaign.
type Answers struct {
	Answer      string    `json:"answer"` // apply, variant, skip or keep
	Instruction string    `json:"instruction,omitempty"`
	Cards       []CardRef `json:"cards"`
}

// Result is what became of one card of an answer.
type Result struct {
	Conversation int64  `json:"conversation"`
	TurnDigest   string `json:"turnDigest"`
	// Outcome: "answered" (the chat took the answer and carries it out),
	// "awaiting_release" (a four-eyes card: it waits in the approver's
	// inbox for a second person), or "refused" (Code and Message say why;
	// nothing changed for this card).
	Outcome string `json:"outcome"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// Answer answers several cards of campaign id alike, each through the
// chat's own answer against its own turn digest: a card changed or
// withdrawn since the list was drawn is refused and named, the others go
// on. A card that is not one of this campaign's tours is refused like an
// unknown one (not_found). The caller answers as herself: the chat takes
// answers on a conversation from its owner only.
func (s *Service) Answer(ctx context.Context, a *access.Actor, id int64, in Answers) ([]Result, error) {
	switch in.Answer {
	case chat.AnswerApply, chat.AnswerVariant, chat.AnswerSkip, chat.AnswerKeep:
	default:
		return nil, fmt.Errorf("%w: answer: want apply, variant, skip or keep", ErrInvalid)
	}
	if len(in.Cards) == 0 || len(in.Cards) > MaxAnswers {
		return nil, fmt.Errorf("%w: cards: want 1 to %d cards", ErrInvalid, MaxAnswers)
	}
	if err := store.CheckText(in.Instruction); err != nil {
		return nil, store.ErrInvalidText.With("instruction: %w", err)
	}
	if utf8.RuneCountInString(in.Instruction) > MaxInstruction {
		return nil, fmt.Errorf("%w: instruction: at most %d characters", ErrInvalid, MaxInstruction)
	}
	if in.Instruction != "" && in.Answer != chat.AnswerVariant {
		return nil, fmt.Errorf("%w: instruction: only a variant takes one", ErrInvalid)
	}
	for _, c := range in.Cards {
		if err := store.CheckText(c.TurnDigest); err != nil {
			return nil, store.ErrInvalidText.With("turnDigest: %w", err)
		}
	}
	r, err := s.visible(ctx, a, id)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(in.Cards))
	for _, c := range in.Cards {
		res := Result{Conversation: c.Conversation, TurnDigest: c.TurnDigest, Outcome: "answered"}
		if err := s.answerOne(ctx, a, r, c, in.Answer, in.Instruction); err != nil {
			if !refused(err) {
				return nil, err // the store failed: the answers so far are taken, the rest are not
			}
			f, msg, _ := fault.Of(err)
			res.Outcome, res.Code, res.Message = "refused", f.Code(), msg
			if errors.Is(err, chat.ErrNotOffered) {
				res.Outcome = "awaiting_release"
			}
		}
		out = append(out, res)
	}
	return out, nil
}

// answerOne answers one card: one of r's tours (else ErrNotFound), through
// chat.AnswerWith, a variant with its instruction. A card of another kind
// (approve or cancel: a plain skill's card) takes apply as approve and the
// other answers as its denial.
func (s *Service) answerOne(ctx context.Context, a *access.Actor, r row, c CardRef, answer, instruction string) error {
	var n int
	if err := s.d.DB.QueryRow(ctx, "SELECT COUNT(*) FROM campaign_items WHERE campaign_id = ? AND conversation_id = ? AND conversation_id > 0",
		r.ID, c.Conversation).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	v, err := s.d.Chat.Get(ctx, a.UID, c.Conversation)
	if err != nil {
		return err
	}
	if v.Card == nil || v.Card.TurnDigest != c.TurnDigest {
		return chat.ErrStaleCard
	}
	if answer == chat.AnswerApply && !slices.Contains(v.Card.Answers, chat.AnswerApply) && slices.Contains(v.Card.Answers, chat.AnswerApprove) {
		answer = chat.AnswerApprove
	}
	if v.Card.ApproveBlocked != "" && (answer == chat.AnswerApply || answer == chat.AnswerApprove) {
		return chat.ErrNotOffered // it waits in the approver's inbox
	}
	return s.d.Chat.AnswerWith(ctx, a.UID, c.Conversation, c.TurnDigest, answer, chat.AnswerOptions{Instruction: instruction})
}
