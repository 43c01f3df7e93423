// Package demo is the offline model of `waymark demo`: a deterministic
// provider that runs the SEO and content tours of the demo site without any
// network. It reads the page through read_page, proposes one change per turn
// through update_page_metadata or update_content, and reacts to the answers:
// a denial with reason "variant" brings another wording of the same change,
// any other answer moves on to the next finding. It derives everything from
// the conversation it is sent, so it holds no state between calls.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"waymark/internal/llm"
)

// Model is the demo provider.
type Model struct{}

var _ llm.Provider = Model{}

// New returns the demo model.
func New() Model { return Model{} }

var (
	pageRe = regexp.MustCompile(`(?i)\b(?:page|seite|subject pages:|"page"\s*:)\s*#?(\d+)`)
	langRe = regexp.MustCompile(`(?i)\b(?:language|sprache)\s*:?\s*(\d+)`)
)

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

// tour is what the conversation tells about the current tour.
type tour struct {
	page, language int64
	hasPage        bool
	offered        map[string]bool
	read           *pageRead // the latest read_page result
	calls          int       // tool calls so far (for call ids)
	handled        map[string]bool
	lastVariant    map[string]int // finding key → variants asked for in a row
	last           string         // key of the last proposed finding whose answer was "variant"
	german         bool
}

type pageRead struct {
	Page        record   `json:"page"`
	Translation *record  `json:"translation"`
	Content     []record `json:"content"`
	Language    int64    `json:"language"`
}

type record struct {
	Table    string            `json:"table"`
	UID      int64             `json:"uid"`
	Language int64             `json:"language"`
	Fields   map[string]string `json:"fields"`
}

func readTour(req llm.Request) *tour {
	t := &tour{offered: map[string]bool{}, handled: map[string]bool{}, lastVariant: map[string]int{}}
	for _, s := range req.Tools {
		t.offered[s.Name] = true
	}
	calls := map[string]llm.ToolCall{}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem, llm.RoleUser:
			if p := pageRe.FindStringSubmatch(m.Content); p != nil {
				t.page, _ = strconv.ParseInt(p[1], 10, 64)
				t.hasPage = true
			}
			if l := langRe.FindStringSubmatch(m.Content); l != nil {
				t.language, _ = strconv.ParseInt(l[1], 10, 64)
			}
			if m.Role == llm.RoleUser && regexp.MustCompile(`(?i)\b(seite|bitte|optimieren|verbessern|inhalt)\b`).MatchString(m.Content) {
				t.german = true
			}
		case llm.RoleAssistant:
			for _, c := range m.ToolCalls {
				calls[c.ID] = c
				t.calls++
			}
		case llm.RoleTool:
			c, ok := calls[m.ToolCallID]
			if !ok {
				continue
			}
			t.observe(c, m.Content)
		}
	}
	if t.language == 1 {
		t.german = true
	}
	return t
}

// observe folds one tool result into the tour.
func (t *tour) observe(c llm.ToolCall, result string) {
	switch c.Name {
	case "read_page":
		var r pageRead
		if json.Unmarshal([]byte(result), &r) == nil && r.Page.UID != 0 {
			t.read = &r
		}
	case "update_page_metadata", "update_content":
		key := findingKeyOf(c)
		var res struct {
			Error  string `json:"error"`
			Reason string `json:"reason"`
		}
		_ = json.Unmarshal([]byte(result), &res)
		if res.Reason == "variant" {
			t.lastVariant[key]++
			t.last = key
			return
		}
		t.handled[key] = true
		t.last = ""
	}
}

func findingKeyOf(c llm.ToolCall) string {
	var a struct {
		Page   int64             `json:"page"`
		UID    int64             `json:"uid"`
		Fields map[string]string `json:"fields"`
	}
	_ = json.Unmarshal([]byte(c.Arguments), &a)
	for f := range a.Fields {
		if c.Name == "update_content" {
			return fmt.Sprintf("tt_content:%d:%s", a.UID, f)
		}
		return fmt.Sprintf("pages:%d:%s", a.Page, f)
	}
	return c.Name
}

// finding is one proposed change.
type finding struct {
	key, tool, field, why string
	uid                   int64
	record                record
}

func (t *tour) findings() []finding {
	if t.read == nil {
		return nil
	}
	target := t.read.Page
	if t.read.Translation != nil {
		target = *t.read.Translation
	}
	var out []finding
	add := func(f finding) {
		if !t.handled[f.key] {
			out = append(out, f)
		}
	}
	if t.offered["update_page_metadata"] {
		d := target.Fields["description"]
		if n := utf8.RuneCountInString(d); n < 140 || n > 160 {
			why := "the meta description is missing"
			if n > 0 {
				why = fmt.Sprintf("the meta description has %d characters; 140 to 160 work best", n)
			}
			add(finding{key: fmt.Sprintf("pages:%d:description", target.UID), tool: "update_page_metadata", field: "description", uid: target.UID, record: target, why: why})
		}
		if n := utf8.RuneCountInString(target.Fields["seoTitle"]); n < 30 {
			add(finding{key: fmt.Sprintf("pages:%d:seoTitle", target.UID), tool: "update_page_metadata", field: "seoTitle", uid: target.UID, record: target,
				why: "the SEO title is missing or too weak to stand in search results"})
		}
	}
	if t.offered["update_content"] {
		for _, c := range t.read.Content {
			body := strings.TrimSpace(c.Fields["bodytext"])
			if c.Fields["CType"] == "text" && utf8.RuneCountInString(body) < 40 {
				add(finding{key: fmt.Sprintf("tt_content:%d:bodytext", c.UID), tool: "update_content", field: "bodytext", uid: c.UID, record: c,
					why: fmt.Sprintf("the text of “%s” is too thin to tell the reader anything", c.Fields["header"])})
			}
		}
	}
	return out
}

// next decides the next message of the assistant.
func (t *tour) next() llm.Message {
	if !t.hasPage {
		return llm.Message{Content: t.say("Which page shall I work on? Name it like “page 2”.", "Welche Seite soll ich bearbeiten? Nennen Sie sie etwa so: „Seite 2“.")}
	}
	if t.read == nil {
		if !t.offered["read_page"] {
			return llm.Message{Content: t.say("I cannot read pages in this configuration.", "In dieser Konfiguration kann ich keine Seiten lesen.")}
		}
		return t.call("read_page", map[string]any{"page": t.page, "language": t.language})
	}
	fs := t.findings()
	if len(fs) == 0 {
		return llm.Message{Content: t.say(
			fmt.Sprintf("I went through “%s”: nothing more to propose. The page is done.", t.read.Page.Fields["title"]),
			fmt.Sprintf("Ich habe „%s“ durchgesehen: Es gibt nichts mehr vorzuschlagen. Die Seite ist fertig.", t.read.Page.Fields["title"]))}
	}
	f := fs[0]
	for _, g := range fs {
		if g.key == t.last {
			f = g
		}
	}
	variant := t.lastVariant[f.key]
	value := t.propose(f, variant)
	args := map[string]any{"fields": map[string]string{f.field: value}}
	if f.tool == "update_content" {
		args["uid"] = f.uid
	} else {
		args["page"] = f.uid
	}
	m := t.call(f.tool, args)
	m.Content = t.say("Proposal: "+f.why+".", "Vorschlag: "+germanWhy(f)+".")
	return m
}

func (t *tour) call(name string, args map[string]any) llm.Message {
	b, _ := json.Marshal(args)
	return llm.Message{ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_%d", t.calls+1), Name: name, Arguments: string(b)}}}
}

func (t *tour) say(en, de string) string {
	if t.german {
		return de
	}
	return en
}

func germanWhy(f finding) string {
	switch f.field {
	case "description":
		return "die Meta-Beschreibung fehlt oder hat nicht die empfohlene Länge von 140 bis 160 Zeichen"
	case "seoTitle":
		return "der SEO-Titel fehlt oder ist zu schwach"
	}
	return fmt.Sprintf("der Text von „%s“ ist zu dünn", f.record.Fields["header"])
}
