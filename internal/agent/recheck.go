package agent

import (
	"context"
	"errors"
	"fmt"
	"waymark/internal/content"
	"waymark/internal/run"
	"waymark/internal/skill"
	"waymark/internal/store"
)

// recheckSkills runs before a waiting run resumes: a process run must still
// hold its process (item 7, fail closed) and carries its subject only while
// the subject check still passes (L3.8); every pinned instruction must still
// hold (a withdrawn process pin lets the process go, item 6); and the tools
// are intersected with the live allow-list, so a resume never gains a tool.
// A failed check ends the waiting run.
func (rt *Decider) recheckSkills(ctx context.Context, r run.Run, st *state) error {
	if st.Process != nil {
		held := false
		var err error
		if rt.preparer != nil {
			held, err = rt.preparer.Holds(ctx, st.Process.Origin)
		}
		if err != nil || !held {
			if err := rt.endWaiting(ctx, r, run.Settlement{Reason: run.ReasonProcessEnded, ErrClass: "process_ended", ErrMsg: "the process was ended"}, nil); err != nil {
				return err
			}
			return ErrProcessEnded
		}
		if sc, ok := rt.preparer.(subjectChecker); ok && st.Process.Subject != nil {
			allowed, err := sc.SubjectAllowed(ctx, r.Initiator, *st.Process.Subject)
			if err != nil {
				return err
			}
			if !allowed {
				st.Process.Subject = nil
			}
		}
	}
	if rt.skills == nil {
		return nil
	}
	pins := append([]skill.Pin(nil), st.Pins...)
	if st.Process != nil {
		pins = append(pins, st.Process.Pin)
	}
	for _, l := range st.Loaded {
		pins = append(pins, l.Pin)
	}
	processTools := st.Process != nil
	for _, p := range pins {
		_, err := rt.skills.PinCheck(ctx, p)
		if err == nil {
			continue
		}
		var pe *skill.PinError
		if !errors.As(err, &pe) {
			if st.Process != nil && p == st.Process.Pin {
				// The process approval cannot be read: the claim is already won, so
				// the turn goes on without the process's declared tools, bounded by
				// the stored list (LC5).
				rt.log.Warn("process approval unreadable on resume", "run", r.UUID, "err", err)
				processTools = false
				continue
			}
			return err
		}
		msg := fmt.Sprintf("skill %d: %s", p.Skill, pe.Reason)
		class, notice := "skill_withdrawn", map[string]any(nil)
		if st.Process != nil && p == st.Process.Pin {
			class, notice = "process_invocation_refused", map[string]any{"kind": "refusal", "refusal": "pin_withdrawn"}
			if err := rt.preparer.Release(ctx, r.UUID); err != nil {
				return err
			}
		}
		if err := rt.endWaiting(ctx, r, run.Settlement{Reason: run.ReasonPolicyDenied, ErrClass: class, ErrMsg: msg}, notice); err != nil {
			return err
		}
		return fmt.Errorf("%w: %s", ErrSkillWithdrawn, msg)
	}
	live, err := rt.skills.AllowListFor(ctx, r.Configuration)
	if err != nil {
		return err
	}
	if processTools {
		live = live.WithDeclaration(st.Process.Tools) // the pinned snapshot's tools, on resume too (item 6)
	}
	st.Tools = allowed(st.Tools, live)
	return nil
}

// subjectChecker is the optional ability of a preparer to re-check a subject.
type subjectChecker interface {
	SubjectAllowed(ctx context.Context, user int64, ref content.Ref) (bool, error)
}

// endWaiting settles a waiting run (no segment holds it) as failed with the
// reason, class and message of to, its status event and, when set, notice.
func (rt *Decider) endWaiting(ctx context.Context, r run.Run, to run.Settlement, notice map[string]any) error {
	to.Owner, to.Status = "", run.StatusFailed
	evs := []run.NewEvent{{Kind: run.EventStatus, Payload: map[string]any{"status": run.StatusFailed, "reason": to.Reason, "errorClass": to.ErrClass}}}
	if notice != nil {
		evs = append([]run.NewEvent{{Kind: run.EventNotice, Payload: notice}}, evs...)
	}
	return rt.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := rt.runs.SettleTx(ctx, tx, r.UUID, to, run.Flush{Events: evs, Privacy: run.PrivacyMetadata})
		return err
	})
}
