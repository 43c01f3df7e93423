package chat

import (
	"context"
	"fmt"
	"strings"

	"waymark/internal/access"
	"waymark/internal/content"
)

// pageContext tells the model which page the conversation is about — its
// title in the conversation's language (the translation's where one
// exists), its uid and its language — in every turn, free and four-eyes
// chats included: the editor chose the page when she started the
// conversation, so the model must not ask which page is meant. It holds
// identities and the title only, never field values. "" for a conversation
// without a page.
func (s *turns) pageContext(ctx context.Context, r row) string {
	if r.Page <= 0 {
		return ""
	}
	page := r.Page
	title := ""
	if p, err := s.src.Get(ctx, s.db, "pages", r.Page); err == nil {
		if p.Language > 0 && p.L10nParent > 0 {
			page = p.L10nParent // a translation's uid names its default-language page
			if parent, err := s.src.Get(ctx, s.db, "pages", page); err == nil {
				title = parent.Fields["title"]
			}
		} else {
			title = p.Fields["title"]
		}
	}
	lang := fmt.Sprintf("language uid %d", r.Language)
	if r.Language > 0 {
		if tr, err := s.src.Translation(ctx, s.db, "pages", page, r.Language); err == nil && tr.Fields["title"] != "" {
			title = tr.Fields["title"]
		}
	}
	if name, ok, err := content.LanguageTitle(ctx, s.src, s.db, r.Language); err == nil && ok {
		lang = fmt.Sprintf("%s, language uid %d", name, r.Language)
	}
	if title == "" {
		title = fmt.Sprintf("page %d", page)
	}
	text := fmt.Sprintf("This conversation is about the page %q (table pages, uid %d) in %s. "+
		"Work on this page and in this language; do not ask the editor which page or language is meant.", title, page, lang)
	return text + s.editorLanguage(ctx, r)
}

// editorLanguage tells the model the language the editor reads — her stored
// backend language — so that its answers and a tour's closing summary are
// in her words (the page's content keeps the page's language).
func (s *turns) editorLanguage(ctx context.Context, r row) string {
	a, err := access.LoadActor(ctx, s.dir, s.db, r.Owner)
	if err != nil || a.BackendLanguage == "" {
		return ""
	}
	name := a.BackendLanguage
	if n, ok := localeNames[a.BackendLanguage]; ok {
		name = n
	}
	return fmt.Sprintf(" The editor reads %s: write every answer to her, your questions and the closing summary of a tour in %s.", name, name)
}

// localeNames names the backend languages of the UI catalogue for the model.
var localeNames = map[string]string{"de": "German", "en": "English"}

// NoticeCardWithdrawn stands in the transcript where a message withdrew a
// waiting proposal: "card_withdrawn: <tool> pages:1 (description); …".
const NoticeCardWithdrawn = "card_withdrawn"

// withdrawnNotice is the trace of a withdrawn card: its calls' tools and
// targets, never the proposed values.
func withdrawnNotice(c Card) string {
	var parts []string
	for _, call := range c.Calls {
		p := call.Tool
		if t := call.Target; t != nil {
			p += fmt.Sprintf(" %s:%d", t.Table, t.UID)
			if len(t.Fields) > 0 {
				p += " (" + strings.Join(t.Fields, ", ") + ")"
			}
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return NoticeCardWithdrawn
	}
	return NoticeCardWithdrawn + ": " + strings.Join(parts, "; ")
}

// withdrawnContext tells the turn that answers a message which withdrew a
// proposal what was withdrawn: the editor's message comes first, and the
// same proposal is not simply made again.
func withdrawnContext(msgs []Message) string {
	n := len(msgs)
	if n < 2 || msgs[n-1].Role != "user" || !strings.HasPrefix(msgs[n-2].Notice, NoticeCardWithdrawn) {
		return ""
	}
	what := strings.TrimPrefix(strings.TrimPrefix(msgs[n-2].Notice, NoticeCardWithdrawn), ": ")
	if what == "" {
		what = "your last proposal"
	}
	return "\n\nThe editor's last message withdrew your waiting proposal (" + what + "). Answer her message first; " +
		"do not propose the same change again unless she asks for it."
}

// pointsPrompt offers the open points of the conversation's skill on its page
// again (P.O1) — through the keeper when it can list them, under the
// visibility rule for the conversation's owner.
func (s *turns) pointsPrompt(ctx context.Context, r row) string {
	type lister interface {
		PromptFor(ctx context.Context, reader, skill, page int64) (string, error)
	}
	l, ok := s.points.(lister)
	if !ok || r.Skill == 0 || r.Page == 0 {
		return ""
	}
	text, err := l.PromptFor(ctx, r.Owner, r.Skill, r.Page)
	if err != nil {
		return ""
	}
	return text
}
