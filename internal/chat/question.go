package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"waymark/internal/agent"
	"waymark/internal/tool"
)

// AnswerQuestion answers the question the conversation waits for (202, issue
// 11 item 4): one of its options, or — where the question allows it — an
// answer in the editor's own words. The answer is checked against the
// question's schema before anything changes (ErrInvalid); one that names a
// question no longer waiting is ErrStaleCard. The accepted answer goes into
// the transcript and resumes the run
// as a chat job.
func (s *decisions) AnswerQuestion(ctx context.Context, actor, id int64, digest, option, text string) error {
	option, text = strings.TrimSpace(option), strings.TrimSpace(text)
	if (option == "") == (text == "") {
		return fmt.Errorf("%w: give either option or text", ErrInvalid)
	}
	r, err := owned(ctx, s.db, actor, id)
	if err != nil {
		return err
	}
	if r, err = s.recovery.reconcile(ctx, r); err != nil {
		return err
	}
	if r.Status != AwaitingInput || r.Question == nil || digest != r.Question.TurnDigest {
		return ErrStaleCard
	}
	values, said := map[string]string{"choice": option}, option
	if text != "" {
		values, said = map[string]string{"text": text}, text
	}
	raw, _ := json.Marshal(values)
	if err := tool.ValidateInput(r.Question.Schema, raw); err != nil {
		if option != "" {
			return fmt.Errorf("%w: option: want one of %s", ErrInvalid, strings.Join(r.Question.Options, ", "))
		}
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s.test.beforeClaim("answer")
	return s.claimDecision(ctx, r, said, job{Op: opSubmit, Values: raw})
}

// submit hands an accepted answer to the runtime, then applies the run's state.
func (s *decisions) submit(ctx context.Context, r row, values json.RawMessage) {
	res, err := s.rt.SubmitInput(ctx, r.Owner, r.PendingRun, agent.Input{TurnDigest: r.Question.TurnDigest, Values: values})
	if err != nil {
		s.handBack(ctx, r, err)
		return
	}
	s.settle.applyWith(ctx, r.ID, r.UpdatedAt, r.PendingRun, res.Answer, res.Status, nil)
}
