package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"waymark/internal/llm"
)

// germanLanguage is the uid of the demo site's German language (site.yaml).
const germanLanguage = 1

// Outcomes of a proposal as the model reads them from the tool results.
const (
	outApplied    = "applied"
	outSkipped    = "skipped"
	outKept       = "kept"
	outNotApplied = "not_applied"
)

var (
	// subjectRe reads the subject line the runtime adds to a process's system text.
	subjectRe = regexp.MustCompile(`process works on page \d+ \(table pages, uid (\d+), language (\d+)\)`)
	skillRe   = regexp.MustCompile(`## Skill: [^\n]*\(([a-z0-9-]+),`)
	pointRe   = regexp.MustCompile(`(?m)^- (pages|tt_content):(\d+) (\w+)$`)
	pageRe    = regexp.MustCompile(`(?i)\b(?:page|seite)\s*#?(\d+)`)
	langRe    = regexp.MustCompile(`(?i)\b(?:language|sprache)\s*:?\s*(\d+)`)
	// pageContextRe reads the page context the runtime adds to every turn of
	// a conversation with a page: its title (Go-quoted), uid and language.
	pageContextRe = regexp.MustCompile(`This conversation is about the page ("(?:[^"\\]|\\.)*") \(table pages, uid (\d+)\) in (?:([^,]+), )?language uid (\d+)\.`)
	readerRe      = regexp.MustCompile(`The editor reads (\w+):`)
	// withdrawnRe reads the proposal a message withdrew, as the runtime names
	// it: "update_page_metadata pages:2 (description)".
	withdrawnRe = regexp.MustCompile(`withdrew your waiting proposal \((.*)\)\. Answer her message first`)
	targetRe    = regexp.MustCompile(`(pages|tt_content):(\d+) \(([^)]*)\)`)
	// whichPageRe recognises the editor asking which page the chat is about.
	// changeRe recognises the editor asking for a change in a free chat.
	changeRe    = regexp.MustCompile(`(?i)besser|verbesser|kürz|änder|optimier|vorschlag|schreib|beschreibung|titel|überschrift|improve|better|shorten|change|rewrite|propose|description|title|heading|fix`)
	whichPageRe = regexp.MustCompile(`(?i)\b(?:welche|was für eine|which|what)\s+(?:seite|page)\b`)
)

// tour is what the conversation tells about the current tour.
type tour struct {
	page, language int64
	hasPage        bool
	process        bool   // a guided process with a subject page
	skill          string // identifier of the process skill, "" outside a process
	offered        map[string]bool
	read           *pageRead           // the latest read_page result
	calls          int                 // tool calls so far (for call ids)
	outcome        map[string]string   // finding key → outcome of its proposal
	order          []string            // finding keys in the order they were decided
	variants       map[string]int      // finding key → variants asked for
	proposed       map[string][]string // finding key → values proposed so far
	last           string              // key of the finding whose last answer was "variant"
	reopen         map[string]bool     // keys of open points from earlier runs, offered first
	completed      bool                // set_progress reported completion
	german         bool
	title          string          // the page's title from the page context, "" without one
	languageName   string          // the page language's name from the page context
	reader         string          // the language the editor reads ("German", "English"), "" when not told
	asked          string          // the editor's latest message
	named          bool            // the editor named the page in her own words ("page 2")
	withdrawn      map[string]bool // finding keys whose proposal the editor's message withdrew
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
	t := &tour{offered: map[string]bool{}, outcome: map[string]string{}, variants: map[string]int{}, proposed: map[string][]string{}, reopen: map[string]bool{}, withdrawn: map[string]bool{}}
	for _, s := range req.Tools {
		t.offered[s.Name] = true
	}
	calls := map[string]llm.ToolCall{}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			t.system(m.Content)
		case llm.RoleUser:
			t.asked = m.Content
			if t.process {
				continue // the subject decides; the editor's words do not move the tour
			}
			if p := pageRe.FindStringSubmatch(m.Content); p != nil {
				t.page, _ = strconv.ParseInt(p[1], 10, 64)
				t.hasPage, t.named = true, true
			}
			if l := langRe.FindStringSubmatch(m.Content); l != nil {
				t.language, _ = strconv.ParseInt(l[1], 10, 64)
			}
		case llm.RoleAssistant:
			for _, c := range m.ToolCalls {
				calls[c.ID] = c
				t.calls++
				if c.Name == "update_page_metadata" || c.Name == "update_content" {
					t.remember(c)
				}
			}
		case llm.RoleTool:
			if c, ok := calls[m.ToolCallID]; ok {
				t.observe(c, m.Content)
			}
		}
	}
	t.german = t.language == germanLanguage
	if t.read != nil {
		t.german = t.read.Language == germanLanguage
	}
	return t
}

// system reads the subject, the process skill and the open points offered again.
func (t *tour) system(text string) {
	if s := subjectRe.FindStringSubmatch(text); s != nil {
		t.page, _ = strconv.ParseInt(s[1], 10, 64)
		t.language, _ = strconv.ParseInt(s[2], 10, 64)
		t.hasPage, t.process = true, true
	}
	if s := pageContextRe.FindStringSubmatch(text); s != nil && !t.process {
		t.title, _ = strconv.Unquote(s[1])
		t.page, _ = strconv.ParseInt(s[2], 10, 64)
		t.languageName = s[3]
		t.language, _ = strconv.ParseInt(s[4], 10, 64)
		t.hasPage = true
	}
	if w := withdrawnRe.FindStringSubmatch(text); w != nil {
		for _, tg := range targetRe.FindAllStringSubmatch(w[1], -1) {
			for _, field := range strings.Split(tg[3], ", ") {
				t.withdrawn[tg[1]+":"+tg[2]+":"+field] = true
			}
		}
	}
	if s := readerRe.FindStringSubmatch(text); s != nil {
		t.reader = s[1]
	}
	if s := skillRe.FindStringSubmatch(text); s != nil {
		t.skill = s[1]
	}
	if i := strings.Index(text, "Open points from earlier runs"); i >= 0 {
		for _, p := range pointRe.FindAllStringSubmatch(text[i:], -1) {
			t.reopen[p[1]+":"+p[2]+":"+p[3]] = true
		}
	}
}

// observe folds one tool result into the tour.
func (t *tour) observe(c llm.ToolCall, result string) {
	switch c.Name {
	case "read_page":
		var r pageRead
		if json.Unmarshal([]byte(result), &r) == nil && r.Page.UID != 0 {
			t.read = &r
		}
	case "set_progress":
		var res struct {
			Progress struct {
				Completed bool `json:"completed"`
			} `json:"progress"`
		}
		if json.Unmarshal([]byte(result), &res) == nil && res.Progress.Completed {
			t.completed = true
		}
	case "update_page_metadata", "update_content":
		key := findingKeyOf(c)
		var res struct {
			Error   string          `json:"error"`
			Reason  string          `json:"reason"`
			Written json.RawMessage `json:"written"`
		}
		_ = json.Unmarshal([]byte(result), &res)
		out := outNotApplied
		switch {
		case res.Reason == "variant":
			t.variants[key]++
			t.last = key
			return
		case res.Reason == "skip":
			out = outSkipped
		case res.Reason == "keep":
			out = outKept
		case res.Error == "" && len(res.Written) > 0:
			out = outApplied
		}
		if _, seen := t.outcome[key]; !seen {
			t.order = append(t.order, key)
		}
		t.outcome[key] = out
		t.last = ""
	}
}

// remember notes the value a write call proposed, so a variant never repeats it.
func (t *tour) remember(c llm.ToolCall) {
	var a struct {
		Fields map[string]string `json:"fields"`
	}
	_ = json.Unmarshal([]byte(c.Arguments), &a)
	key := findingKeyOf(c)
	for _, v := range a.Fields {
		t.proposed[key] = append(t.proposed[key], v)
	}
}

// findingKeyOf is the key of the finding a write call proposes: table, uid, field.
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
