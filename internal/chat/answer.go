package chat

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/catalog"
	"waymark/internal/clock"
	"waymark/internal/store"
)

// labels are the editor's words for each answer (the transcript shows them).
var labels = map[string]string{
	AnswerApply: "Übernehmen", AnswerVariant: "Andere Variante", AnswerSkip: "Überspringen", AnswerKeep: "Behalten",
	AnswerApprove: "Freigeben", AnswerCancel: "Ablehnen",
}

// decisions owns the answers to a conversation's cards and questions: the
// answer claimed with its job (Answer, AnswerQuestion), the decision handed
// to the runtime (decide, submit) and its result settled (settler), and a
// refused one handed back.
type decisions struct {
	db  *store.DB
	rt  decider
	clk clock.Clock
	log *slog.Logger
	dir access.Directory

	jobs     committer
	recovery reconciler
	settle   *settler
	test     TestConfig
}

// decider is what carrying out a decision needs of the runtime: the
// decision or the answer handed to the run, and the run's state and events.
type decider interface {
	Approve(ctx context.Context, actor int64, id string, d agent.Decision) (agent.Result, error)
	SubmitInput(ctx context.Context, actor int64, id string, in agent.Input) (agent.Result, error)
	runStates
}

func newDecisions(db *store.DB, rt decider, clk clock.Clock, log *slog.Logger, dir access.Directory,
	jobs committer, recovery reconciler, settle *settler, test TestConfig) *decisions {
	return &decisions{db: db, rt: rt, clk: clk, log: log, dir: dir, jobs: jobs, recovery: recovery, settle: settle, test: test}
}

// Answer records the editor's answer to the waiting card and the job that
// hands the decision to the runtime (202). The server decides which
// answers a card has: a reason sent for a card that does not offer it is a
// plain denial (P.R5). On a four-eyes card the approval is blocked; the
// denials still work.
func (s *decisions) Answer(ctx context.Context, actor, id int64, digest, answer string) error {
	return s.AnswerWith(ctx, actor, id, digest, answer, AnswerOptions{})
}

// MaxInstruction is the longest instruction of a variant, in characters:
// the runtime's, which the variant's denial passes through.
const MaxInstruction = agent.MaxInstruction

// AnswerOptions are the optional parts of an answer to a card.
type AnswerOptions struct {
	// Instruction is the editor's wish for the variant ("kürzer", "mit dem
	// Ortsnamen"): the model receives it with the variant's denial. Only a
	// variant takes one; at most MaxInstruction characters.
	Instruction string
}

// AnswerWith is Answer with o. Bad options are refused before anything
// changes. A variant the card does not offer is a plain denial, and its
// instruction goes with the variant.
func (s *decisions) AnswerWith(ctx context.Context, actor, id int64, digest, answer string, o AnswerOptions) error {
	if _, ok := labels[answer]; !ok {
		return fmt.Errorf("%w: answer: want apply, variant, skip, keep, approve or cancel", ErrInvalid)
	}
	if err := store.CheckText(o.Instruction); err != nil {
		return store.ErrInvalidText.With("instruction: %w", err)
	}
	if utf8.RuneCountInString(o.Instruction) > MaxInstruction {
		return fmt.Errorf("%w: instruction: at most %d characters", ErrInvalid, MaxInstruction)
	}
	if o.Instruction != "" && answer != AnswerVariant {
		return fmt.Errorf("%w: instruction: only a variant takes one", ErrInvalid)
	}
	ctx, end := s.db.SettingsScope(ctx) // the card's check and the answer's text read the editor once
	defer end()
	r, err := owned(ctx, s.db, actor, id)
	if err != nil {
		return err
	}
	if r, err = s.recovery.reconcile(ctx, r); err != nil {
		return err
	}
	if r.Status != AwaitingApproval || r.Card == nil || digest != r.Card.TurnDigest {
		return ErrStaleCard
	}
	approve := answer == AnswerApply || answer == AnswerApprove
	if approve && !r.Card.ofKind(answer) {
		// Apply on a plain approve/cancel card, approve on a process card:
		// an option this card never offers (400), not a proposal that
		// cannot be applied.
		return fmt.Errorf("%w: answer: %s is not an answer of this card; it offers %s", ErrInvalid, answer, strings.Join(r.Card.Answers, ", "))
	}
	if approve && r.Card.ApproveBlocked != "" {
		return ErrNotOffered
	}
	if approve && !r.Card.offers(answer) {
		return ErrCannotApply // the card's call has a preview error
	}
	if !approve && !r.Card.offers(answer) {
		answer, o.Instruction = AnswerCancel, "" // a reason the card does not offer is a plain denial
	}
	said := s.answerText(ctx, actor, answer)
	if o.Instruction != "" {
		said += ": " + o.Instruction // the transcript shows the wish the model receives
	}
	s.test.beforeClaim("answer")
	return s.claimDecision(ctx, r, said, job{Op: opDecide, Answer: answer, Instruction: o.Instruction})
}

// claimDecision takes the decision r waits for (awaiting → processing, only
// while the conversation still shows the card or question r read) and adds
// the editor's answer to the transcript and j, the job that carries the
// decision out, in one transaction. A claim lost to another answer, a
// message or an end changes nothing: ErrStaleCard.
func (s *decisions) claimDecision(ctx context.Context, r row, said string, j job) error {
	now := micros(s.clk)
	j.Conversation, j.At, j.From, j.Decision, j.Run = r.ID, now, r.Status, r.card, r.PendingRun
	won, err := s.jobs.commit(ctx, &j, func(tx *store.Tx) (bool, error) {
		// A card's claim keeps the card (row.Decided): a decision the runtime
		// accepted is settled even when the job that took it is lost. A
		// question's claim keeps the question (row.Answered): an answer whose
		// job is lost before it reached the run is handed to the workers again.
		won, err := applyTx(ctx, tx, r.ID, evClaimAnswer, r.Status, change{seen: &r.card, keepCard: true}, now)
		if err != nil || !won {
			return won, err
		}
		if err := addMessageTx(ctx, tx, r.ID, Message{Role: "user", Content: said}, now); err != nil {
			return false, err
		}
		j.After, err = messageCount(ctx, tx, r.ID) // the count the card's outcome is keyed by
		return err == nil, err
	})
	if err != nil {
		return err
	}
	if !won {
		return ErrStaleCard
	}
	return nil
}

// answerText is the editor's answer as the transcript shows it: the card's
// button label in the editor's backend language (the UI's catalogue).
func (s *decisions) answerText(ctx context.Context, actor int64, answer string) string {
	lang := ""
	if a, err := access.LoadActor(ctx, s.dir, s.db, actor); err == nil {
		lang = a.BackendLanguage
	}
	return catalog.For(lang).Get("answer." + answer)
}
