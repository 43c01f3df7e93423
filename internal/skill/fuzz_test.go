package skill

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParse checks that Parse never panics, refuses only with a *ParseError
// whose line is inside the file, returns normalised versions, and that every
// version it returns survives Render and Parse unchanged, digest included.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"---\nname: a\ndescription: b\n---\nbody\n",
		"---\nname: Tour\ndescription: >\n  Guides.\nallowed-tools: [Read, Write, Read]\nprocess: true\nsupport: full\nlicense: MIT\n---\n\n# Tour\n",
		"\uFEFF---\r\nname: a\r\ndescription: \"x\\ny\"\r\nallowed-tools: Read, Grep\r\n---\r\n",
		"---\nname: a\ndescription: b\nallowed-tools:\n---\n",
		"---\nname: &n a\ndescription: *n\nsupport: *n\n---\n---\n",
		"---\nname: a\nname: b\n---\n",
		"---\nfoo: [a\n---\n",
		"---\n- a\n---\n",
		"name: a\n",
		"---\nname: a\ndescription: '  | x'\nprocess: yes\n---\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse error %T %v, want a *ParseError", err, err)
			}
			if pe.Line < 0 || pe.Line > len(data)+2 || pe.Msg == "" {
				t.Fatalf("Parse error %+v: line outside the file or no message", pe)
			}
			return
		}
		if !reflect.DeepEqual(v, v.Normalized()) {
			t.Fatalf("Parse returned %#v, not normalised", v)
		}
		if err := ParseDigest(v.Digest()); err != nil {
			t.Fatalf("Digest() %s: %v", v.Digest(), err)
		}
		file := Render(v)
		again, err := Parse(file)
		if err != nil {
			t.Fatalf("Parse(Render(%#v)) error: %v\nfile:\n%s", v, err, file)
		}
		if !reflect.DeepEqual(again, v) || again.Digest() != v.Digest() {
			t.Fatalf("Parse(Render(v)) =\n%#v, want\n%#v\nfile:\n%s", again, v, file)
		}
	})
}
