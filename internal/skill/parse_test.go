package skill

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseReadsTheFieldsOfASkillFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		file string
		want Version
	}{{
		name: "minimal file",
		file: "---\nname: seo\ndescription: Writes titles.\n---\nBe brief.\n",
		want: Version{Name: "seo", Description: "Writes titles.", Body: "Be brief."},
	}, {
		name: "every key read",
		file: "---\nname: Tour\ndescription: Guides an editor.\nallowed-tools: [Read, content.write]\nprocess: true\nsupport: full\n---\n# Tour\n\nStep one.\n",
		want: Version{Name: "Tour", Description: "Guides an editor.", Body: "# Tour\n\nStep one.", Support: "full",
			AllowedTools: []string{"Read", "content.write"}, Process: true},
	}, {
		name: "allowed-tools as a block list, sorted and de-duplicated",
		file: "---\nname: a\ndescription: b\nallowed-tools:\n  - Write\n  - Read\n  - Write\n---\nx",
		want: Version{Name: "a", Description: "b", Body: "x", AllowedTools: []string{"Read", "Write"}},
	}, {
		name: "allowed-tools as a comma string",
		file: "---\nname: a\ndescription: b\nallowed-tools: \"Read, Grep\"\n---\nx",
		want: Version{Name: "a", Description: "b", Body: "x", AllowedTools: []string{"Grep", "Read"}},
	}, {
		name: "allowed-tools as a space string",
		file: "---\nname: a\ndescription: b\nallowed-tools: Read Grep mcp:search\n---\nx",
		want: Version{Name: "a", Description: "b", Body: "x", AllowedTools: []string{"Grep", "Read", "mcp:search"}},
	}, {
		name: "allowed-tools as an empty list declares nothing",
		file: "---\nname: a\ndescription: b\nallowed-tools: []\n---\nx",
		want: Version{Name: "a", Description: "b", Body: "x", AllowedTools: []string{}},
	}, {
		name: "allowed-tools as an empty string declares nothing",
		file: "---\nname: a\ndescription: b\nallowed-tools: \"\"\n---\nx",
		want: Version{Name: "a", Description: "b", Body: "x", AllowedTools: []string{}},
	}, {
		name: "allowed-tools without a value declares nothing",
		file: "---\nname: a\ndescription: b\nallowed-tools:\n---\nx",
		want: Version{Name: "a", Description: "b", Body: "x", AllowedTools: []string{}},
	}, {
		name: "unknown keys ignored",
		file: "---\nname: a\nlicense: MIT\nmetadata:\n  author: x\nversion: 3\ndescription: b\n---\nx",
		want: Version{Name: "a", Description: "b", Body: "x"},
	}, {
		name: "CRLF line ends",
		file: "---\r\nname: a\r\ndescription: b\r\n---\r\nline one\r\nline two\r\n",
		want: Version{Name: "a", Description: "b", Body: "line one\nline two"},
	}, {
		name: "byte order mark",
		file: "\uFEFF---\nname: a\ndescription: b\n---\nx\n",
		want: Version{Name: "a", Description: "b", Body: "x"},
	}, {
		name: "body trimmed of leading blank lines and trailing white space, indentation kept",
		file: "---\nname: a\ndescription: b\n---\n\n  \n    code\n\ntext  \n\n\n",
		want: Version{Name: "a", Description: "b", Body: "    code\n\ntext"},
	}, {
		name: "fences with trailing spaces, no body",
		file: "--- \nname: a\ndescription: b\n---\t\n",
		want: Version{Name: "a", Description: "b"},
	}, {
		name: "folded description trimmed",
		file: "---\nname: \" a \"\ndescription: >\n  one\n  two\n---\nx",
		want: Version{Name: "a", Description: "one two", Body: "x"},
	}, {
		name: "process false",
		file: "---\nname: a\ndescription: b\nprocess: false\n---\nx",
		want: Version{Name: "a", Description: "b", Body: "x"},
	}, {
		name: "body may contain fences",
		file: "---\nname: a\ndescription: b\n---\n---\nname: c\n---\n",
		want: Version{Name: "a", Description: "b", Body: "---\nname: c\n---"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse([]byte(tc.file))
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tc.file, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q) =\n%#v, want\n%#v", tc.file, got, tc.want)
			}
		})
	}
}

func TestParseRefusesBadFilesNamingTheLine(t *testing.T) {
	t.Parallel()
	head := "---\nname: a\ndescription: b\n"
	for _, tc := range []struct {
		name     string
		file     string
		line     int
		fragment string
	}{
		{"no opening fence", "name: a\ndescription: b\n---\nx", 1, `must start with a line "---"`},
		{"empty file", "", 1, `must start with a line "---"`},
		{"no closing fence", head + "body\n", 5, `missing the line "---" that closes the front matter`},
		{"no closing fence, no final newline", head + "body", 5, `missing the line "---"`},
		{"YAML syntax error on front-matter line 3", head + "foo: : :\n---\n", 4, "front matter: mapping values are not allowed"},
		{"YAML parser error on front-matter line 3", "---\nname: a\ndescription: b\n- c\n---\n", 4, "front matter: did not find expected key"},
		{"unclosed flow list from front-matter line 3", head + "foo: [a\nbar: c\n---\n", 4, "front matter: did not find expected ',' or ']'"},
		{"YAML error on front-matter line 1", "---\n\tname: a\n---\n", 2, "front matter: found character that cannot start any token"},
		{"unknown alias", head + "x: 1\nsupport: *nope\n---\n", 5, "unknown anchor 'nope'"},
		{"control character in front matter", head + "x: \x01\n---\n", 4, "character U+0001 is not allowed"},
		{"line separator in front matter", head + "x: a\u2028b\n---\n", 4, "character U+2028 is not allowed"},
		{"front matter not a mapping", "---\n- a\n- b\n---\n", 2, "front matter: want keys such as name: and description:, got a list"},
		{"name missing", "---\ndescription: b\n---\nx", 1, "name: required"},
		{"description missing", "---\nname: a\n---\nx", 1, "description: required"},
		{"empty front matter", "---\n---\nx", 1, "name: required"},
		{"name not a string", "---\nname: 123\ndescription: b\n---\n", 2, "name: want a string, got the number 123"},
		{"name a list", "---\nname: [a]\ndescription: b\n---\n", 2, "name: want a string, got a list"},
		{"name empty", "---\nname: \"  \"\ndescription: b\n---\n", 2, "name: must not be empty"},
		{"name on two lines", "---\nname: \"a\\nb\"\ndescription: b\n---\n", 2, "name: want a single line"},
		{"name too long", "---\nname: " + strings.Repeat("é", 121) + "\ndescription: b\n---\n", 2, "name: 121 characters, over the limit of 120"},
		{"description too long", "---\nname: a\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", 3, "description: 1025 characters, over the limit of 1024"},
		{"description null", "---\nname: a\ndescription:\n---\n", 3, "description: want a string, got no value"},
		{"support a number", head + "support: 2\n---\n", 4, "support: want a string, got the number 2"},
		{"bad tool name in a list", head + "allowed-tools:\n  - Read\n  - Bash(git:*)\n---\n", 6, `allowed-tools: "Bash(git:*)" is not a tool name`},
		{"bad tool name in a string", head + "allowed-tools: Read, Gr!ep\n---\n", 4, `allowed-tools: "Gr!ep" is not a tool name`},
		{"tool name too long", head + "allowed-tools: " + strings.Repeat("t", 65) + "\n---\n", 4, "is not a tool name"},
		{"tool list item not a string", head + "allowed-tools: [Read, [x]]\n---\n", 4, "allowed-tools: want a tool name, got a list"},
		{"allowed-tools a mapping", head + "allowed-tools: {a: b}\n---\n", 4, "allowed-tools: want a list of tool names or a comma-separated string"},
		{"process yes is a string", head + "process: yes\n---\n", 4, `process: want true or false, got the string "yes"`},
		{"process quoted", head + "process: \"true\"\n---\n", 4, `process: want true or false, got the string "true"`},
		{"process a number", head + "process: 1\n---\n", 4, "process: want true or false, got the number 1"},
		{"duplicate key", head + "support: x\nname: b\n---\n", 5, `duplicate key "name" (first on line 2)`},
		{"duplicate unread key", head + "license: a\nlicense: b\n---\n", 5, `duplicate key "license" (first on line 4)`},
		{"NUL byte in the body", head + "---\nok\nbad\x00\n", 6, "NUL byte"},
		{"invalid UTF-8", head + "---\n\xff\n", 5, "invalid UTF-8 (byte 0xff)"},
		{"over MaxSize", head + "---\n" + strings.Repeat("x", MaxSize), 0, "SKILL.md is 65567 bytes, over the limit of 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := Parse([]byte(tc.file))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%.60q) = %+v, %v; want a *ParseError", tc.file, v, err)
			}
			if pe.Line != tc.line || !strings.Contains(pe.Msg, tc.fragment) {
				t.Errorf("Parse(%.60q) error = line %d %q, want line %d containing %q", tc.file, pe.Line, pe.Msg, tc.line, tc.fragment)
			}
			if !reflect.DeepEqual(v, Version{}) {
				t.Errorf("Parse(%.60q) returned %+v beside its error, want the zero Version", tc.file, v)
			}
		})
	}
}

func TestParseErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte("---\nname: a\ndescription: b\nallowed-tools: {x: 1}\n---\n"))
	if got, want := err.Error(), "line 4: allowed-tools: want a list of tool names or a comma-separated string"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := (&ParseError{Msg: "SKILL.md is 70000 bytes, over the limit of 65536"}).Error(),
		"SKILL.md is 70000 bytes, over the limit of 65536"; got != want {
		t.Errorf("Error() of a whole-file error = %q, want %q", got, want)
	}
}

func TestParseAcceptsAFileOfExactlyMaxSize(t *testing.T) {
	t.Parallel()
	head := "---\nname: a\ndescription: b\n---\n"
	file := head + strings.Repeat("x", MaxSize-len(head))
	v, err := Parse([]byte(file))
	if err != nil {
		t.Fatalf("Parse of %d bytes: %v", len(file), err)
	}
	if len(v.Body) != MaxSize-len(head) {
		t.Errorf("body is %d bytes, want %d", len(v.Body), MaxSize-len(head))
	}
}

func TestRenderRoundTripsThroughParse(t *testing.T) {
	t.Parallel()
	for _, v := range []Version{
		{Name: "a", Description: "b"},
		{Name: "Tour", Description: "Guides.\nIn two lines.", Body: "# Tour\n\n    code\n---\nend", Support: "partial",
			AllowedTools: []string{"Read", "content.write", "mcp:x"}, Process: true},
		{Name: "true", Description: "yes", Support: "null", AllowedTools: []string{}},
		{Name: "123", Description: "- a: b # c", Body: "x", AllowedTools: []string{"true", "1", "null"}},
		{Name: "'\"quoted", Description: "a  \n  b\n---\nc", Body: "é"},
		{Name: "long", Description: strings.Repeat("word ", 200) + "end", Body: strings.Repeat("y", 10000)},
	} {
		file := Render(v)
		got, err := Parse(file)
		if err != nil {
			t.Errorf("Parse(Render(%+v)) error: %v\nfile:\n%s", v, err, file)
			continue
		}
		if want := v.Normalized(); !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(Render(v)) =\n%#v, want\n%#v\nfile:\n%s", got, want, file)
		}
	}
}

func TestRenderWritesTheKeysAUserExpects(t *testing.T) {
	t.Parallel()
	got := string(Render(Version{Name: "seo", Description: "Titles.", Body: "Be brief.", AllowedTools: []string{"Write", "Read"}, Process: true, Support: "full"}))
	want := "---\nname: seo\ndescription: Titles.\nallowed-tools:\n  - Read\n  - Write\nprocess: true\nsupport: full\n---\nBe brief.\n"
	if got != want {
		t.Errorf("Render =\n%s\nwant\n%s", got, want)
	}
	if got := string(Render(Version{Name: "a", Description: "b"})); got != "---\nname: a\ndescription: b\n---\n" {
		t.Errorf("Render of a minimal version = %q", got)
	}
}
