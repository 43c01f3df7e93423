package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"waymark/internal/agent"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// A decision taken elsewhere — in the inbox, through the runs API, or by a
// job that died after the runtime accepted it — is settled here as the
// editor's own: the run's events say what was decided (settler).

// handOver hands a decision taken elsewhere back to the conversation r (as
// read while it waited; from is its status now, the caller's claim or the
// status read): a notice says what became of the decision; a run that still
// runs is followed (processing), one that paused again or ended gives the
// conversation its state at once.
func (s *settler) handOver(ctx context.Context, r row, from Status, st agent.Status) error {
	notice := s.decidedElsewhere(ctx, r, st)
	if st.Status.Terminal() || st.Status.Waiting() {
		// A card answered elsewhere is settled as one the editor answered
		// (ADR-022): its outcome, and the open point a skip records or the
		// points an applied write or Behalten closes, commit with the hand-over.
		var record func(ctx context.Context, tx *store.Tx) error
		if r.Card != nil {
			var err error
			if record, err = s.settleDecidedCard(ctx, r, r.Card, st); err != nil {
				s.log.Error("settle card decided elsewhere", "conversation", r.ID, "run", r.PendingRun, "err", err)
			}
		}
		return s.settleRunWith(ctx, r, from, st, st.Answer, &notice, record)
	}
	now := micros(s.clk)
	// While the run goes on, the decided card is kept (row.Decided) so that
	// the run's end settles it (reconcile).
	follow := change{follows: true, keepCard: r.Card != nil}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		won, err := applyTx(ctx, tx, r.ID, evDecidedElsewhere, from, follow.guarded(r, from), now)
		if err != nil || !won {
			return err
		}
		return addMessageTx(ctx, tx, r.ID, notice, now)
	})
}

// decidedElsewhere reads from the run what became of the decision r waited
// for: approved_elsewhere (with the records written since — identities
// only), denied_elsewhere, answered_elsewhere, process_ended (the process
// was ended, or its end stopped the resume), cancelled_elsewhere, or the
// code of the failure that ended the run.
func (s *settler) decidedElsewhere(ctx context.Context, r row, st agent.Status) Message {
	digest := r.digest()
	code, ended := "", false
	var written []string
	evs, _ := s.rt.Events(ctx, r.Owner, st.UUID, 0, 0)
	for _, e := range evs {
		var p map[string]any
		if json.Unmarshal(e.Payload, &p) != nil {
			continue
		}
		switch {
		case e.Kind == run.EventApproval && p["turnDigest"] == digest && code == "":
			if approved, ok := p["approved"].(bool); ok && approved {
				code = NoticeApprovedElsewhere
			} else if ok {
				code = NoticeDeniedElsewhere
				switch agent.DenyReason(fmt.Sprint(p["reason"])) {
				case agent.DenySkip:
					code = NoticeSkippedElsewhere
				case agent.DenyKeep:
					code = NoticeKeptElsewhere
				case agent.DenyVariant:
					code = NoticeVariantElsewhere
				}
			}
			// A decision someone else took says by whom: the code, "@" and
			// the decider's uid (the reader's screen shows the name).
			if by, ok := p["decidedBy"].(float64); ok && int64(by) != r.Owner && code != "" {
				code += "@" + strconv.FormatInt(int64(by), 10)
			}
		case e.Kind == run.EventInput && p["turnDigest"] == digest && p["status"] == nil && code == "":
			code = NoticeAnsweredElsewhere
		case e.Kind == run.EventStatus && p["endProcess"] == true:
			ended = true
		case e.Kind == run.EventToolWrite && code == NoticeApprovedElsewhere:
			var w struct {
				Table  string   `json:"table"`
				UID    int64    `json:"uid"`
				Fields []string `json:"fields"`
			}
			if json.Unmarshal(e.Payload, &w) == nil {
				written = append(written, fmt.Sprintf("%s:%d (%s)", w.Table, w.UID, strings.Join(w.Fields, ", ")))
			}
		}
	}
	switch {
	case code != "":
	case ended || st.TerminationReason == run.ReasonProcessEnded:
		code = NoticeProcessEnded
	case st.Status == run.StatusCancelled:
		code = NoticeCancelledElsewhere
	case r.Status == AwaitingInput && st.Status != run.StatusFailed:
		code = NoticeAnsweredElsewhere // an input event the privacy level emptied
	default:
		code = failureCode(st)
	}
	if len(written) > 0 {
		code += ": " + strings.Join(written, "; ")
	}
	return Message{Role: "assistant", Notice: code}
}

// The notices of a decision taken elsewhere (handOver).
const (
	NoticeApprovedElsewhere  = "approved_elsewhere"
	NoticeDeniedElsewhere    = "denied_elsewhere"
	NoticeSkippedElsewhere   = "skipped_elsewhere"
	NoticeKeptElsewhere      = "kept_elsewhere"
	NoticeVariantElsewhere   = "variant_elsewhere"
	NoticeAnsweredElsewhere  = "answered_elsewhere"
	NoticeCancelledElsewhere = "cancelled_elsewhere"
	NoticeProcessEnded       = "process_ended"
)

// failureCode names why a run ended failed: its refusal, else its reason.
func failureCode(st agent.Status) string {
	return cmp.Or(st.Refusal, string(st.TerminationReason), string(st.Status))
}

// settleDecided settles the card conversation r was carrying out when its
// decision's job is gone — the worker died after the runtime accepted the
// decision, or a retried job found the run no longer waiting (ADR-022 P.R2,
// P.R4;) — once the run paused or ended (st). The
// run's events say what the runtime accepted: the approval event with the
// card's turn digest (none: the decision never reached the runtime, nothing
// to settle), the continuation's end (failed or cancelled: nothing
// recorded), and for an applied card the write step the write recorded
// (tool_write, stored at every privacy level; none: not applied).
//
// It returns what records the card inside the transaction that gives the
// conversation the run's state (applyWith), or nil when there is nothing to
// record.
func (s *settler) settleDecided(ctx context.Context, r row, st agent.Status) (func(ctx context.Context, tx *store.Tx) error, error) {
	return s.settleDecidedCard(ctx, r, r.Decided, st)
}

// settleDecidedCard is settleDecided for card, the editor's own decided
// card or one decided elsewhere (handOver).
func (s *settler) settleDecidedCard(ctx context.Context, r row, card *Card, st agent.Status) (func(ctx context.Context, tx *store.Tx) error, error) {
	if card == nil || !(st.Status.Terminal() || st.Status.Waiting()) {
		return nil, nil
	}
	evs, err := s.rt.Events(ctx, r.Owner, card.RunUUID, 0, 0)
	if err != nil {
		return nil, err
	}
	at := -1
	var answer string
	for i, e := range evs {
		var p struct {
			Approved       *bool  `json:"approved"`
			Reason         string `json:"reason"`
			TurnDigest     string `json:"turnDigest"`
			PreviewChanged bool   `json:"previewChanged"`
		}
		if e.Kind != run.EventApproval || json.Unmarshal(e.Payload, &p) != nil || p.Approved == nil ||
			p.PreviewChanged || p.TurnDigest != card.TurnDigest {
			continue
		}
		at, answer = i, answerOf(*p.Approved, agent.DenyReason(p.Reason))
		break
	}
	if at < 0 {
		return nil, nil
	}
	mayRecord := true
	var calls []agent.CallResult
	for _, e := range evs[at+1:] {
		var p struct {
			Status string `json:"status"`
		}
		if e.Kind == run.EventStatus && json.Unmarshal(e.Payload, &p) == nil && p.Status != string(run.StatusRunning) {
			mayRecord = p.Status != string(run.StatusFailed) && p.Status != string(run.StatusCancelled)
			break
		}
		if e.Kind == run.EventToolWrite && len(calls) == 0 && len(card.Calls) > 0 {
			var w tool.WriteStep
			if json.Unmarshal(e.Payload, &w) == nil {
				calls = append(calls, agent.CallResult{ID: card.Calls[0].ID, Tool: card.Calls[0].Tool, Write: &w})
			}
		}
	}
	if len(calls) == 0 && len(card.Calls) > 0 {
		calls = []agent.CallResult{{ID: card.Calls[0].ID, Tool: card.Calls[0].Tool, IsError: true}}
	}
	return s.settleCard(r, *card, answer, calls, mayRecord, true, 0), nil
}

// answerOf is the card answer an approval event records.
func answerOf(approved bool, reason agent.DenyReason) string {
	switch {
	case approved:
		return AnswerApply
	case reason == agent.DenyVariant:
		return AnswerVariant
	case reason == agent.DenySkip:
		return AnswerSkip
	case reason == agent.DenyKeep:
		return AnswerKeep
	}
	return AnswerCancel
}
