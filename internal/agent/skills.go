package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"waymark/internal/content"
	"waymark/internal/fault"
	"waymark/internal/llm"
	"waymark/internal/skill"
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

// LoadSkillEntry is load_skill as the tool registry lists it: the runtime
// answers the call itself (loadSkill), so the registry's own answer is only
// the one a call outside a run gets.
func LoadSkillEntry() *tool.FuncTool {
	return tool.NewFuncTool(LoadSkillDef(), func(context.Context, tool.Call) (tool.Result, error) {
		return tool.ErrorResult("load_skill is answered by the runtime"), nil
	})
}

// ErrSkillWithdrawn: an instruction the run holds is no longer approved (or
// its source no longer trusted): the waiting run was ended instead of resumed.
var ErrSkillWithdrawn = fault.New(fault.Conflict, "skill_withdrawn", "an instruction of this run was withdrawn")

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

// loadSkill answers a load_skill call: an on-demand, non-process skill of the
// configuration whose current version instructs now joins the run's system
// text from the next round on. Loading the same digest twice changes nothing.
// The result confirms; it never carries the skill's text.
func (rt *Driver) loadSkill(ctx context.Context, seg *segment, st *state, c llm.ToolCall) error {
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
