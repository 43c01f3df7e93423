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
// conversation it is sent, so it holds no state between calls. The demo
// site's facts (Nordlicht Digital in Hamburg-Altona, since 2009) appear only
// on a page of the demo site; on any other site's page it words its
// proposals from the page's title, headers and own text only, and it reads
// a rich-text bodytext as text (content.PlainText), never as HTML.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"waymark/internal/llm"
)

// Model is the demo provider. Pace, when set, is the pause before each
// word of a reply (streamed word by word): a slow model to watch.
type Model struct {
	Pace time.Duration
}

var _ llm.Provider = Model{}

// New returns the demo model.
func New() Model { return Model{} }

// Complete answers the next step of the tour.
func (m Model) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	t := readTour(req)
	msg := t.next()
	msg.Role = llm.RoleAssistant
	if msg.Content != "" && (req.OnDelta != nil || m.Pace > 0) {
		for _, w := range strings.SplitAfter(msg.Content, " ") {
			if m.Pace > 0 {
				t := time.NewTimer(m.Pace)
				select {
				case <-ctx.Done():
					t.Stop()
					return llm.Response{}, ctx.Err()
				case <-t.C:
				}
			}
			if req.OnDelta != nil {
				req.OnDelta(llm.Delta{Content: w})
			}
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
	if t.title != "" && whichPageRe.MatchString(t.asked) {
		return llm.Message{Content: t.namePage()}
	}
	if !t.process && t.title != "" && !t.named && t.read == nil && !changeRe.MatchString(t.asked) {
		// A free chat knows its page; until the editor asks for a change
		// the model says what it can do there instead of reading it.
		return llm.Message{Content: t.offer()}
	}
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
	if t.withdrawn[f.key] {
		// The editor's message withdrew this proposal: not the same change
		// again, the next wording, and her message is answered first.
		variant++
	}
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
	if t.withdrawn[f.key] {
		m.Content = t.say("I set my proposal aside for your message. Here is another wording for the same point — answer it or tell me more. ",
			"Ich habe meinen Vorschlag für deine Nachricht zurückgestellt. Hier ist eine andere Formulierung für denselben Punkt – entscheide oder schreib mir mehr. ") + m.Content
	}
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

// namePage answers the editor's "which page is this?" from the page context
// the runtime sent: the page's title, uid and language, in the language the
// editor reads (the page's language when she is not told).
func (t *tour) namePage() string {
	lang := t.languageName
	if t.say("en", "de") == "de" {
		if lang == "" {
			lang = fmt.Sprintf("Sprache %d", t.language)
		}
		return fmt.Sprintf("Wir sind auf der Seite „%s“ (uid %d) in %s.", t.title, t.page, lang)
	}
	if lang == "" {
		lang = fmt.Sprintf("language %d", t.language)
	}
	return fmt.Sprintf("We are on the page “%s” (uid %d) in %s.", t.title, t.page, lang)
}

// offer is the answer in a free chat before the editor asked for a change:
// the page it works on and what to ask for.
func (t *tour) offer() string {
	return t.namePage() + " " + t.say("Tell me what to improve, for example “Make the description better”, or type / to choose a process.",
		"Sag mir, was ich verbessern soll, etwa „Mach die Beschreibung besser“, oder tippe /, um einen Prozess zu wählen.")
}

// say is en or de in the language the editor reads (the page's language
// when she is not told): every sentence to her — explanations, questions,
// the closing summary. The proposed values keep the page's language.
func (t *tour) say(en, de string) string {
	switch {
	case t.reader == "German", t.reader == "" && t.german:
		return de
	}
	return en
}
