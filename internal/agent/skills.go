package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"waymark/internal/content"
	"waymark/internal/fault"
	"waymark/internal/llm"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// Skills is what the runtime needs of the skill store (skill.Store).
type Skills interface {
	Compose(ctx context.Context, configUID int64, budget int) (skill.Composition, error)
	AllowListFor(ctx context.Context, configUID int64) (skill.AllowList, error)
	PinCheck(ctx context.Context, pin skill.Pin) (skill.Approval, error)
	Loadable(ctx context.Context, configUID int64, identifier string) (skill.Section, bool, error)
}

// LoadSkillTool is the builtin through which the model loads an on-demand
// instruction skill; the runtime answers it (see loadSkill).
const LoadSkillTool = "load_skill"

// LoadSkillDef is the definition to register for LoadSkillTool.
func LoadSkillDef() tool.Def {
	return tool.Def{
		Name: LoadSkillTool,
		Description: "Load an on-demand skill of this conversation's catalogue by its identifier; its approved " +
			"instructions apply from the next step on.",
		Schema: json.RawMessage(`{"type":"object","properties":{"skill":{"type":"string","minLength":1,"maxLength":200}},
			"required":["skill"],"additionalProperties":false}`),
		Effect: tool.EffectRead, Group: "skills", DefaultEnabled: true,
	}
}

// ErrSkillWithdrawn: an instruction the run holds is no longer approved (or
// its source no longer trusted): the waiting run was ended instead of resumed.
var ErrSkillWithdrawn = fault.New(fault.Conflict, "skill_withdrawn", "an instruction of this run was withdrawn")

// composeSkills fixes what the configuration's skills contribute to a run
// starting now: the system text with the instruction sections (from approval
// snapshots), the fenced reference data, and the tool allow-list.
func (rt *Runtime) composeSkills(ctx context.Context, seg *segment, cfg llmconfig.Configuration, st *state) error {
	var proc []skill.Section
	var procTools []string
	if st.Process != nil {
		// The pin is the source: the process is composed from its approval snapshot (item 6).
		sec := st.Process.Section
		if sub := st.Process.Subject; sub != nil {
			sec.Body += subjectLine(*sub)
		}
		proc, procTools = []skill.Section{sec}, st.Process.Tools
	}
	st.System = skill.SystemText(cfg.SystemPrompt, proc)
	if rt.skills == nil {
		if st.Process != nil && procTools != nil {
			st.Tools = allowed(st.Tools, skill.AllowList{Declared: true}.WithDeclaration(procTools))
		}
		return nil
	}
	c, err := rt.skills.Compose(ctx, cfg.UID, 0)
	if err != nil {
		return fmt.Errorf("compose skills: %w", err)
	}
	st.System = skill.SystemText(cfg.SystemPrompt, append(c.Instructions, proc...))
	st.Fenced = c.Fenced
	st.Pins = c.Pins()
	al := c.AllowList
	if st.Process != nil {
		al = al.WithDeclaration(procTools)
	}
	st.Tools = allowed(st.Tools, al)
	if len(c.Dropped) > 0 {
		seg.emit(run.EventNotice, map[string]any{"kind": "skill_budget", "reason": "fenced_skills_dropped", "skills": c.Dropped})
	}
	return nil
}

// subjectLine tells the model which record the process works on.
func subjectLine(sub content.Ref) string {
	if sub.Table == "pages" {
		return fmt.Sprintf("\n\nThis process works on page %d (table pages, uid %d, language %d).", sub.UID, sub.UID, sub.Language)
	}
	return fmt.Sprintf("\n\nThis process works on the record %s:%d (language %d).", sub.Table, sub.UID, sub.Language)
}

// allowed keeps the tools the allow-list allows; load_skill is exempt from it.
func allowed(tools []string, al skill.AllowList) []string {
	out := []string{}
	for _, t := range tools {
		if t == LoadSkillTool || al.Allows(t) {
			out = append(out, t)
		}
	}
	return out
}

// recheckSkills runs before a waiting run resumes: a process run must still
// hold its process (item 7, fail closed) and carries its subject only while
// the subject check still passes (L3.8); every pinned instruction must still
// hold (a withdrawn process pin lets the process go, item 6); and the tools
// are intersected with the live allow-list, so a resume never gains a tool.
// A failed check ends the waiting run.
func (rt *Runtime) recheckSkills(ctx context.Context, r run.Run, st *state) error {
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
func (rt *Runtime) endWaiting(ctx context.Context, r run.Run, to run.Settlement, notice map[string]any) error {
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

// loadSkill answers a load_skill call: an on-demand, non-process skill of the
// configuration whose current version instructs now joins the run's system
// text from the next round on. Loading the same digest twice changes nothing.
// The result confirms; it never carries the skill's text.
func (rt *Runtime) loadSkill(ctx context.Context, seg *segment, st *state, c llm.ToolCall) error {
	var args struct {
		Skill string `json:"skill"`
	}
	if err := rt.tools.Validate(c.Name, json.RawMessage(c.Arguments)); err != nil {
		rt.answer(seg, st, c, tool.ErrorResult(err.Error()))
		return nil
	}
	_ = json.Unmarshal([]byte(c.Arguments), &args)
	if rt.skills == nil {
		rt.answer(seg, st, c, tool.ErrorResult("no skills are available"))
		return nil
	}
	sec, ok, err := rt.skills.Loadable(ctx, seg.cfg.UID, args.Skill)
	if err != nil {
		return err
	}
	if !ok {
		rt.answer(seg, st, c, tool.ErrorResult("skill "+args.Skill+" is not available to load"))
		return nil
	}
	for _, l := range st.Loaded {
		if l.Pin == sec.Pin {
			rt.answer(seg, st, c, tool.Result{Content: map[string]any{"loaded": sec.Identifier, "name": sec.Name, "alreadyLoaded": true}})
			return nil
		}
	}
	st.Loaded = append(st.Loaded, sec)
	rt.answer(seg, st, c, tool.Result{Content: map[string]any{"loaded": sec.Identifier, "name": sec.Name}})
	return nil
}
