// Package demo is the offline model of `waymark demo`: a deterministic
// provider that runs the SEO and content tours of the demo site without any
// network. In a guided process it reads the subject page through read_page,
// counts its findings, and works through them one per turn: it reports
// "point k of n" with set_progress, points at the element with
// highlight_record and proposes one whole-sentence change within the field's
// recommended length through update_page_metadata or update_content. It
// reacts to the card's answers — "variant" brings another wording of the same
// change, skip and keep move on — reports completion and ends with a summary
// of what was applied, skipped and kept. It writes in the page's language
// (language 1 of the demo site is German) and derives everything from the
// conversation it is sent, so it holds no state between calls.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"waymark/internal/llm"
)

// Model is the demo provider.
type Model struct{}

var _ llm.Provider = Model{}

// New returns the demo model.
func New() Model { return Model{} }

// Complete answers the next step of the tour.
func (Model) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	t := readTour(req)
	msg := t.next()
	msg.Role = llm.RoleAssistant
	if msg.Content != "" && req.OnDelta != nil {
		for _, w := range strings.SplitAfter(msg.Content, " ") {
			req.OnDelta(llm.Delta{Content: w})
		}
	}
	finish := llm.FinishStop
	if len(msg.ToolCalls) > 0 {
		finish = llm.FinishToolCalls
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += utf8.RuneCountInString(m.Content)/4 + 4
	}
	return llm.Response{Message: msg, FinishReason: finish,
		Usage: llm.Usage{PromptTokens: prompt, CompletionTokens: utf8.RuneCountInString(msg.Content)/4 + 8}}, nil
}

// next decides the next message of the assistant.
func (t *tour) next() llm.Message {
	if !t.hasPage {
		return llm.Message{Content: t.say("Which page shall I work on? Name it like “page 2”.",
			"Welche Seite soll ich bearbeiten? Nenne sie etwa so: „Seite 2“.")}
	}
	if t.read == nil {
		if !t.offered["read_page"] {
			return llm.Message{Content: t.say("I cannot read pages in this configuration.", "In dieser Konfiguration kann ich keine Seiten lesen.")}
		}
		m := t.call("read_page", map[string]any{"page": t.page, "language": t.language})
		m.Content = t.say("I am reading the page first.", "Ich lese zuerst die Seite.")
		return m
	}
	all := t.findings()
	var open []finding
	for _, f := range all {
		if _, done := t.outcome[f.key]; !done {
			open = append(open, f)
		}
	}
	if len(open) == 0 {
		if t.process && t.offered["set_progress"] && !t.completed {
			total := max(len(all), 1)
			return t.call("set_progress", map[string]any{"current": total, "total": total, "completed": true,
				"label": t.say("Done", "Fertig")})
		}
		return llm.Message{Content: t.summary(all)}
	}
	f := open[0]
	for _, g := range open {
		if g.key == t.last {
			f = g // a variant was asked for: the same finding again
		}
	}
	variant := t.variants[f.key]
	value := t.fresh(f, variant)
	args := map[string]any{"fields": map[string]string{f.field: value}}
	if f.tool == "update_content" {
		args["uid"] = f.uid
	} else {
		args["page"] = f.uid
	}
	point := len(all) - len(open) + 1
	var m llm.Message
	if t.process && t.offered["set_progress"] {
		t.add(&m, "set_progress", map[string]any{"current": point, "total": len(all), "label": t.label(f)})
	}
	if t.process && t.offered["highlight_record"] {
		h := map[string]any{"table": "pages", "uid": t.page}
		if f.tool == "update_content" {
			h = map[string]any{"table": "tt_content", "uid": f.uid}
		}
		t.add(&m, "highlight_record", h)
	}
	t.add(&m, f.tool, args)
	m.Content = t.explain(f, value, variant, point, len(all))
	return m
}

// fresh is the variant's value, or the next wording not proposed before.
func (t *tour) fresh(f finding, variant int) string {
	for v := variant; v < variant+8; v++ {
		value := t.propose(f, v)
		if !slices.Contains(t.proposed[f.key], value) {
			return value
		}
	}
	return t.propose(f, variant)
}

// call is a message with one tool call.
func (t *tour) call(name string, args map[string]any) llm.Message {
	var m llm.Message
	t.add(&m, name, args)
	return m
}

// add appends a tool call with the next free call id.
func (t *tour) add(m *llm.Message, name string, args map[string]any) {
	b, _ := json.Marshal(args)
	t.calls++
	m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: fmt.Sprintf("call_%d", t.calls), Name: name, Arguments: string(b)})
}

func (t *tour) say(en, de string) string {
	if t.german {
		return de
	}
	return en
}
