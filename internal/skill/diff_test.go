package skill

import (
	"reflect"
	"strings"
	"testing"
)

func TestLineDiff(t *testing.T) {
	cases := []struct {
		name     string
		old, new string
		want     string // one "op text" per line
	}{
		{"both empty", "", "", ""},
		{"everything added", "", "a\nb\n", "+a|+b"},
		{"everything removed", "a\nb\n", "", "-a|-b"},
		{"same", "a\nb\n", "a\nb\n", "=a|=b"},
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", "=a|-b|+B|=c"},
		{"line inserted", "a\nc\n", "a\nb\nc\n", "=a|+b|=c"},
		{"line removed", "a\nb\nc\n", "a\nc\n", "=a|-b|=c"},
		{"no final newline", "a\nb", "a\nb\n", "=a|=b"},
		{"moved line", "a\nb\nc\n", "b\nc\na\n", "-a|=b|=c|+a"},
		{"interleaved", "x\na\ny\nb\n", "a\nz\nb\n", "-x|=a|-y|+z|=b"},
		{"blank lines count", "a\n\nb\n", "a\nb\n", "=a|-|=b"},
	}
	for _, c := range cases {
		got := LineDiff(c.old, c.new)
		var parts []string
		for _, l := range got {
			parts = append(parts, l.Op+l.Text)
		}
		if s := strings.Join(parts, "|"); s != c.want {
			t.Errorf("%s: LineDiff = %q, want %q", c.name, s, c.want)
		}
	}
}

// TestLineDiffReproducesBothTexts checks the defining property: the "=" and
// "-" lines are the old text, the "=" and "+" lines the new one.
func TestLineDiffReproducesBothTexts(t *testing.T) {
	pairs := [][2]string{
		{"---\nname: a\ndescription: d\n---\nOne\nTwo\nThree\n", "---\nname: a\ndescription: e\n---\nOne\nTwo and a half\nThree\nFour\n"},
		{"a\na\nb\na\n", "b\na\na\nb\n"},
		{"", "x\n"},
	}
	for _, p := range pairs {
		var oldL, newL []string
		for _, l := range LineDiff(p[0], p[1]) {
			if l.Op != "+" {
				oldL = append(oldL, l.Text)
			}
			if l.Op != "-" {
				newL = append(newL, l.Text)
			}
		}
		if !reflect.DeepEqual(oldL, splitLines(p[0])) || !reflect.DeepEqual(newL, splitLines(p[1])) {
			t.Errorf("LineDiff(%q, %q) does not reproduce the texts: %q / %q", p[0], p[1], oldL, newL)
		}
	}
}
