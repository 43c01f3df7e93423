package web

import (
	"io/fs"
	"regexp"
	"testing"

	"waymark/internal/catalog"
	"waymark/internal/chat"
)

// Every text a template or the live script looks up exists in the catalogue
// (whose test checks both languages), and so does every key the Go code builds
// from a code: outcomes, statuses, answers.
func TestEveryLookedUpTextIsInTheCatalogue(t *testing.T) {
	re := regexp.MustCompile(`\.Get "([A-Za-z0-9_.]+)"`)
	files, _ := fs.Glob(templateFiles, "templates/*.html")
	for _, f := range files {
		b, _ := fs.ReadFile(templateFiles, f)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if !catalog.Has(m[1]) {
				t.Errorf("%s looks up %q, which the catalogue lacks", f, m[1])
			}
		}
	}
	keys := append([]string{}, scriptLabels...)
	for _, o := range []string{chat.OutcomeApplied, chat.OutcomeCheck, chat.OutcomeNotApplied, chat.OutcomeSkipped, chat.OutcomeVariant, chat.OutcomeKept} {
		keys = append(keys, "outcome."+o)
	}
	for _, s := range []chat.Status{chat.Idle, chat.Processing, chat.AwaitingApproval, chat.AwaitingInput, chat.Failed} {
		keys = append(keys, "status."+string(s))
	}
	for _, a := range []string{chat.AnswerApply, chat.AnswerVariant, chat.AnswerSkip, chat.AnswerKeep, chat.AnswerApprove, chat.AnswerCancel} {
		keys = append(keys, "answer."+a)
	}
	for _, a := range []string{"approve", "cancel", "variant", "skip", "keep"} {
		keys = append(keys, "inbox.decided."+a)
	}
	for _, g := range []string{"openPoint", "openPoints", "descriptionMissing", "descriptionShort", "titleMissing", "titleShort"} {
		keys = append(keys, "gap."+g)
	}
	for _, k := range keys {
		if !catalog.Has(k) {
			t.Errorf("the code looks up %q, which the catalogue lacks", k)
		}
	}
}

func TestWordDiffMarksChangedWords(t *testing.T) {
	cur, prop := wordDiff("We make websites.", "We build fast websites.")
	render := func(ss []segment) string {
		out := ""
		for _, s := range ss {
			if s.Op != "" {
				out += "[" + s.Op + ":" + s.Text + "]"
			} else {
				out += s.Text
			}
		}
		return out
	}
	if got := render(cur); got != "We [del:make] websites." {
		t.Errorf("current side = %q", got)
	}
	if got := render(prop); got != "We [ins:build fast] websites." {
		t.Errorf("proposed side = %q", got)
	}
}

// The German texts say "du" (CONVENTIONS: the web UI): no text addresses the
// reader as "Sie" ("Sie haben sie gestartet" was the one that did).
func TestGermanTextsSayDuNeverSie(t *testing.T) {
	formal := regexp.MustCompile(`\bSie (haben|können|müssen|sind|werden|möchten|wollen|dürfen)\b|\bIhnen\b|\bIhre?[nmrs]?\b`)
	de := catalog.For("de")
	for _, k := range catalog.Keys("de") {
		if s := de.Get(k); formal.MatchString(s) {
			t.Errorf("%s = %q addresses the reader as Sie", k, s)
		}
	}
}
