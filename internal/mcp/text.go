package mcp

import (
	"fmt"
	"strings"

	"waymark/internal/access"
	"waymark/internal/catalog"
	"waymark/internal/chat"
	"waymark/internal/openpoint"
	"waymark/internal/site"
)

// The readable text beside each structured result: what a model or a
// person reads first.

func viewText(a *access.Actor, v chat.View) string {
	t := catalog.For(a.BackendLanguage)
	var b strings.Builder
	fmt.Fprintf(&b, "Conversation %d: %s (%s)", v.ID, v.Status, t.Get("status."+string(v.Status)))
	if v.Tour != nil {
		fmt.Fprintf(&b, " — %s, %s", v.Tour.PageTitle, v.Tour.LanguageName)
	}
	if v.Skill != nil {
		fmt.Fprintf(&b, " — %s", v.Skill.Name)
	}
	b.WriteString("\n")
	for i := len(v.Messages) - 1; i >= 0; i-- {
		if m := v.Messages[i]; m.Role == "assistant" && m.Content != "" {
			fmt.Fprintf(&b, "Assistant: %s\n", m.Content)
			break
		}
	}
	if v.Card != nil {
		fmt.Fprintf(&b, "Card waiting (turnDigest %s); answers offered: %s\n", v.Card.TurnDigest, strings.Join(v.Card.Answers, ", "))
		if len(v.Card.Answers) == 0 || v.Card.ApproveBlocked != "" {
			b.WriteString(t.Get("card.fourEyes") + "\n")
		}
		writeCard(&b, t, v.Card)
	}
	if q := v.Question; q != nil {
		fmt.Fprintf(&b, "Question waiting (turnDigest %s): %s\n", q.TurnDigest, q.Question)
		if len(q.Options) > 0 {
			fmt.Fprintf(&b, "Options: %s\n", strings.Join(q.Options, ", "))
		}
		if q.FreeText {
			b.WriteString("A free-text answer is allowed.\n")
		}
	}
	if s := v.Summary; s != nil {
		fmt.Fprintf(&b, "%s: %s, %s, %s, %s, %s\n", t.Get("summary.heading"), t.Get("summary.applied", s.Applied), t.Get("summary.check", s.Check),
			t.Get("summary.skipped", s.Skipped), t.Get("summary.kept", s.Kept), t.Get("summary.notApplied", s.NotApplied))
	}
	if v.Error != "" {
		fmt.Fprintf(&b, "Error: %s\n", v.Error)
	}
	if v.Status == chat.Processing {
		b.WriteString("The assistant is still working; read on with get_conversation (after: its updatedAt).\n")
	}
	return strings.TrimSpace(b.String())
}

// writeCard writes each call of a card: its heading, and per field the
// current and proposed value and the proposal's length.
func writeCard(b *strings.Builder, t catalog.T, c *chat.Card) {
	for _, call := range c.Calls {
		if call.Heading != "" {
			b.WriteString(call.Heading + "\n")
		} else {
			b.WriteString(t.Get("card.titleGeneric") + " (" + call.Tool + ")\n")
		}
		if call.PreviewError != "" {
			b.WriteString(t.Get("card.cannotApply", call.PreviewError) + "\n")
		}
		for _, it := range call.Preview {
			label := it.Label
			if label == "" {
				label = it.Field
			}
			cur := it.Current
			if cur == "" {
				cur = t.Get("card.empty")
			}
			fmt.Fprintf(b, "%s — %s: %q → %s: %q\n", label, t.Get("card.current"), cur, t.Get("card.proposed"), it.Proposed)
			if m := it.Measure; m != nil {
				line := t.Get("card.length", m.Count, m.Min, m.Max)
				if m.Count < m.Min || m.Count > m.Max {
					line += " (" + t.Get("card.outOfRange") + ")"
				}
				b.WriteString(line + "\n")
			}
		}
	}
}

func pagesText(tree []site.Node, langs []site.Language) string {
	var b strings.Builder
	b.WriteString("Pages:\n")
	var walk func(ns []site.Node, depth int)
	walk = func(ns []site.Node, depth int) {
		for _, n := range ns {
			fmt.Fprintf(&b, "%s- %s (uid %d)\n", strings.Repeat("  ", depth), n.Title, n.UID)
			walk(n.Children, depth+1)
		}
	}
	walk(tree, 0)
	b.WriteString("Languages:\n")
	for _, l := range langs {
		fmt.Fprintf(&b, "- %s (uid %d)\n", l.Title, l.UID)
	}
	return b.String()
}

func openPointsText(list []openpoint.Entry) string {
	if len(list) == 0 {
		return "No open points."
	}
	var b strings.Builder
	for _, p := range list {
		fmt.Fprintf(&b, "- page %d, %s %d %s: %s\n", p.Page, p.Table, p.UID, p.Field, p.Summary)
	}
	return b.String()
}
