package web

import (
	"strings"
	"unicode"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// segment is a run of text of a diff side: kept, deleted (current) or inserted (proposed).
type segment struct {
	Text string
	Op   string // "", "del", "ins"
}

// wordDiff compares current and proposed word by word (words and the spaces
// between them are the units) and returns both sides' segments.
func wordDiff(current, proposed string) (cur, prop []segment) {
	index := map[string]rune{}
	var words []string
	encode := func(s string) []rune {
		var out []rune
		for _, w := range tokens(s) {
			r, ok := index[w]
			if !ok {
				r = rune(len(words) + 0xE000) // private use area, far from surrogates
				if r >= 0xF8FF {
					r = rune(len(words) + 0xF0000)
				}
				index[w] = r
				words = append(words, w)
			}
			out = append(out, r)
		}
		return out
	}
	a, b := encode(current), encode(proposed)
	dmp := diffmatchpatch.New()
	diffs := dmp.DiffMainRunes(a, b, false)
	diffs = dmp.DiffCleanupSemantic(diffs)
	decode := func(s string) string {
		var sb strings.Builder
		for _, r := range s {
			i := int(r) - 0xE000
			if r >= 0xF0000 {
				i = int(r) - 0xF0000
			}
			if i >= 0 && i < len(words) {
				sb.WriteString(words[i])
			}
		}
		return sb.String()
	}
	for _, d := range diffs {
		text := decode(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			cur = append(cur, segment{Text: text})
			prop = append(prop, segment{Text: text})
		case diffmatchpatch.DiffDelete:
			cur = append(cur, segment{Text: text, Op: "del"})
		case diffmatchpatch.DiffInsert:
			prop = append(prop, segment{Text: text, Op: "ins"})
		}
	}
	return cur, prop
}

// tokens splits s into words and the whitespace runs between them.
func tokens(s string) []string {
	var out []string
	start := 0
	space := false
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if i > start && sp != space {
			out = append(out, s[start:i])
			start = i
		}
		space = sp
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
