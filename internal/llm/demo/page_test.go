package demo

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"waymark/internal/llm"
)

// pageContext is the page context the chat runtime sends in every turn of a
// conversation with a page (internal/chat pagecontext.go).
func pageContext(title string, uid int64, lang string, langUID int64, reader string) string {
	return fmt.Sprintf("You are Waymark's editorial assistant.\n\nThis conversation is about the page %q (table pages, uid %d) in %s, language uid %d. "+
		"Work on this page and in this language; do not ask the editor which page or language is meant. The editor reads %s: write every answer to her.", title, uid, lang, langUID, reader)
}

func complete(t *testing.T, msgs ...llm.Message) string {
	t.Helper()
	r, err := New().Complete(context.Background(), llm.Request{Messages: msgs, Tools: []llm.ToolSpec{{Name: "read_page"}}})
	if err != nil {
		t.Fatal(err)
	}
	return r.Message.Content
}

// A free chat names its page: asked which page it is, the demo model answers
// from the page context — title, uid and language — in the editor's language,
// and it never asks the editor which page is meant.
func TestFreeChatNamesItsPageFromThePageContext(t *testing.T) {
	for _, tc := range []struct {
		title, lang, reader, ask, want string
		langUID                        int64
	}{
		{`Über "uns"`, "Deutsch", "German", "Welche Seite ist das?", `Wir sind auf der Seite „Über "uns"“ (uid 2) in Deutsch.`, 1},
		{"About", "English", "English", "Which page is this?", "We are on the page “About” (uid 2) in English.", 0},
	} {
		got := complete(t, llm.Message{Role: llm.RoleSystem, Content: pageContext(tc.title, 2, tc.lang, tc.langUID, tc.reader)},
			llm.Message{Role: llm.RoleUser, Content: tc.ask})
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.ask, got, tc.want)
		}
	}
	// Any other message in a free chat works on the context's page, not "which page?".
	r, err := New().Complete(context.Background(), llm.Request{Tools: []llm.ToolSpec{{Name: "read_page"}}, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: pageContext("About", 2, "English", 0, "German")},
		{Role: llm.RoleUser, Content: "Mach die Beschreibung besser."}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Message.ToolCalls) != 1 || r.Message.ToolCalls[0].Name != "read_page" || !strings.Contains(r.Message.ToolCalls[0].Arguments, `"page":2`) {
		t.Errorf("free chat with a page context: got %+v, want read_page of page 2", r.Message)
	}
	// A message that asks for nothing says where it works and what to ask for.
	got := complete(t, llm.Message{Role: llm.RoleSystem, Content: pageContext("About", 2, "English", 0, "German")},
		llm.Message{Role: llm.RoleUser, Content: "Was kannst du?"})
	if !strings.HasPrefix(got, "Wir sind auf der Seite „About“ (uid 2) in English. Sag mir, was ich verbessern soll") {
		t.Errorf("free chat, a message that asks for nothing: got %q", got)
	}
	// Without a page context the demo model still asks.
	if got := complete(t, llm.Message{Role: llm.RoleUser, Content: "Welche Seite ist das?"}); !strings.Contains(got, "Which page shall I work on?") {
		t.Errorf("without a page context: got %q", got)
	}
}
