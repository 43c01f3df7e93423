package skill

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"waymark/internal/fault"

	"go.yaml.in/yaml/v3"
)

// MaxSize is the largest SKILL.md Parse accepts, in bytes.
const MaxSize = 64 << 10

// Limits of the front-matter fields, in characters.
const (
	maxNameLen        = 120
	maxDescriptionLen = 1024
	maxToolNameLen    = 64
)

// ParseError is a SKILL.md Parse refuses. Line is the 1-based line in the
// file the problem was found on, or 0 when the problem is the file as a whole
// (its size).
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return "line " + strconv.Itoa(e.Line) + ": " + e.Msg
}

// Is makes errors.Is(err, ErrInvalid) hold.
func (e *ParseError) Is(target error) bool { return target == ErrInvalid }

// Fault is ErrInvalid naming the line: "SKILL.md line 4: …".
func (e *ParseError) Fault() *fault.Error { return ErrInvalid.With("SKILL.md %s", e.Error()) }

func errorf(line int, format string, args ...any) *ParseError {
	return &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads a SKILL.md as the wider agent ecosystem writes it and returns
// its version, normalised. Every refusal is a *ParseError naming the line.
//
// The file is at most MaxSize bytes of UTF-8 without NUL bytes; a leading
// byte order mark is ignored and CRLF and lone CR line ends read as LF. Its
// first line is "---", then comes YAML front matter, then a line "---", then
// the Markdown body (blank lines before it and trailing white space dropped).
// The front matter is a mapping without duplicate keys; Parse reads:
//
//   - name: required, a non-empty one-line string of at most 120 characters;
//   - description: required, a non-empty string of at most 1024 characters;
//   - allowed-tools: a list of tool names or one string of names separated by
//     commas and/or spaces ("Read, Grep" or "Read Grep"); each name is 1–64
//     of A–Z a–z 0–9 _ . : -. Absent means no declaration (nil); present but
//     empty ([], "" or no value) means the skill declared no tools;
//   - process: a YAML boolean (true or false; "yes" is a string and refused);
//     true marks a process skill;
//   - support: an optional string.
//
// White space around name, description and support is dropped. Other keys
// (license, metadata, version, …) are allowed and ignored: they are not part
// of the Version and so not of its digest.
func Parse(data []byte) (Version, error) {
	if len(data) > MaxSize {
		return Version{}, errorf(0, "SKILL.md is %d bytes, over the limit of %d", len(data), MaxSize)
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if bytes.IndexByte(data, '\r') >= 0 {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
		data = bytes.ReplaceAll(data, []byte("\r"), []byte("\n"))
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return Version{}, errorf(lineAt(data, i), "NUL byte: a SKILL.md is text")
	}
	if !utf8.Valid(data) {
		i := firstInvalidUTF8(data)
		return Version{}, errorf(lineAt(data, i), "invalid UTF-8 (byte 0x%02x): a SKILL.md is UTF-8 text", data[i])
	}
	lines := strings.Split(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the newline ending the last line
	}
	if len(lines) == 0 || !isFence(lines[0]) {
		return Version{}, errorf(1, `missing front matter: the file must start with a line "---"`)
	}
	end := 1
	for end < len(lines) && !isFence(lines[end]) {
		end++
	}
	if end == len(lines) {
		return Version{}, errorf(len(lines)+1, `missing the line "---" that closes the front matter opened on line 1`)
	}
	v, err := parseFrontMatter(lines[1:end])
	if err != nil {
		return Version{}, err
	}
	body := lines[end+1:]
	for len(body) > 0 && strings.TrimSpace(body[0]) == "" {
		body = body[1:]
	}
	v.Body = strings.TrimRightFunc(strings.Join(body, "\n"), unicode.IsSpace)
	return v.Normalized(), nil
}

// isFence reports whether line is a front-matter fence: "---" and nothing
// but spaces or tabs after it.
func isFence(line string) bool {
	return strings.TrimRight(line, " \t") == "---"
}

// lineAt is the 1-based line of data[i].
func lineAt(data []byte, i int) int {
	return 1 + bytes.Count(data[:i], []byte("\n"))
}

func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// parseFrontMatter decodes the front-matter lines (file lines 2 onwards)
// into the fields of a Version.
func parseFrontMatter(lines []string) (Version, error) {
	for i, l := range lines {
		if r, ok := yamlUnreadable(l); !ok {
			return Version{}, errorf(i+2, "front matter: character %U is not allowed here", r)
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &doc); err != nil {
		line, msg := yamlErrorLine(err.Error(), lines)
		return Version{}, errorf(line, "front matter: %s", msg)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == 0 {
		root = &yaml.Node{Kind: yaml.MappingNode, Line: 0} // no keys at all
	}
	if root.Kind != yaml.MappingNode {
		return Version{}, errorf(root.Line+1, "front matter: want keys such as name: and description:, got %s", describe(root))
	}
	return decodeFields(root)
}

// yamlUnreadable reports the first character of line the YAML reader refuses
// (control characters) or counts as a line break where this parser does not
// (NEL, LS, PS), which would shift the line numbers of its errors.
func yamlUnreadable(line string) (rune, bool) {
	for _, r := range line {
		switch {
		case r == '\t', r >= 0x20 && r <= 0x7E:
		case r == 0x85, r == 0x2028, r == 0x2029:
			return r, false
		case r >= 0xA0 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000:
		default:
			return r, false
		}
	}
	return 0, true
}

// yamlErrorLine maps a YAML error message for the front matter to a file
// line and the message without its "yaml: line N: " prefix. The YAML library
// numbers scanner errors from 1 but parser errors (those its parser raises:
// "did not find expected …" and a few "found …") from 0, and leaves the
// number out when it would be 0; the front matter starts on file line 2. An
// unknown alias, reported without a line, is looked up in lines.
func yamlErrorLine(s string, lines []string) (int, string) {
	s = strings.TrimPrefix(s, "yaml: ")
	rest, ok := strings.CutPrefix(s, "line ")
	if !ok {
		if name, ok := strings.CutPrefix(s, "unknown anchor '"); ok {
			alias := "*" + strings.TrimSuffix(name, "' referenced")
			for i, l := range lines {
				if strings.Contains(l, alias) {
					return i + 2, s
				}
			}
		}
		return 2, s
	}
	num, msg, ok := strings.Cut(rest, ": ")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 {
		return 2, s
	}
	if isYAMLParserError(msg) {
		n++ // 0-based
	}
	return n + 1, msg
}

func isYAMLParserError(msg string) bool {
	switch msg {
	case "found undefined tag handle", "found duplicate %YAML directive",
		"found incompatible YAML document", "found duplicate %TAG directive":
		return true
	}
	return strings.HasPrefix(msg, "did not find expected ")
}

// decodeFields reads the keys of the front-matter mapping m. Node lines
// count from the first front-matter line, which is file line 2.
func decodeFields(m *yaml.Node) (Version, error) {
	var v Version
	seen := make(map[string]int, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, n := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			continue // a complex key: nothing reads it
		}
		if first, dup := seen[k.Value]; dup {
			return Version{}, errorf(k.Line+1, "duplicate key %q (first on line %d)", k.Value, first)
		}
		seen[k.Value] = k.Line + 1
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		var err error
		switch k.Value {
		case "name":
			v.Name, err = text(k.Value, n, maxNameLen, false)
		case "description":
			v.Description, err = text(k.Value, n, maxDescriptionLen, true)
		case "support":
			if n.ShortTag() != "!!null" {
				v.Support, err = text(k.Value, n, 0, true)
			}
		case "allowed-tools":
			v.AllowedTools, err = tools(n)
		case "process":
			if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v.Process) != nil {
				err = errorf(n.Line+1, "process: want true or false, got %s", describe(n))
			}
		}
		if err != nil {
			return Version{}, err
		}
	}
	for _, key := range []string{"name", "description"} {
		if _, ok := seen[key]; !ok {
			return Version{}, errorf(1, "%s: required, but the front matter has no %s: key", key, key)
		}
	}
	return v, nil
}

// text reads a string field: trimmed, non-empty unless it is support (max 0),
// at most max characters, without control characters other than new lines
// and tabs when multiline.
func text(key string, n *yaml.Node, max int, multiline bool) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", errorf(n.Line+1, "%s: want a string, got %s", key, describe(n))
	}
	s := strings.TrimSpace(n.Value)
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\t')) {
			if multiline {
				return "", errorf(n.Line+1, "%s: control character %U is not allowed", key, r)
			}
			return "", errorf(n.Line+1, "%s: want a single line without control characters, got %U", key, r)
		}
	}
	if max == 0 {
		return s, nil
	}
	if s == "" {
		return "", errorf(n.Line+1, "%s: must not be empty", key)
	}
	if c := utf8.RuneCountInString(s); c > max {
		return "", errorf(n.Line+1, "%s: %d characters, over the limit of %d", key, c, max)
	}
	return s, nil
}

// tools reads allowed-tools: a list of names, or one string of names
// separated by commas and/or white space. Null reads as declared-empty.
func tools(n *yaml.Node) ([]string, error) {
	const want = "allowed-tools: want a list of tool names or a comma-separated string"
	out := []string{}
	add := func(name string, line int) error {
		if !isToolName(name) {
			return errorf(line, "allowed-tools: %.80q is not a tool name (want 1 to %d of A-Z a-z 0-9 _ . : -)", name, maxToolNameLen)
		}
		out = append(out, name)
		return nil
	}
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null":
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		names := strings.FieldsFunc(n.Value, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
		for _, name := range names {
			if err := add(name, n.Line+1); err != nil {
				return nil, err
			}
		}
	case n.Kind == yaml.SequenceNode:
		for _, item := range n.Content {
			if item.Kind == yaml.AliasNode && item.Alias != nil {
				item = item.Alias
			}
			if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" {
				return nil, errorf(item.Line+1, "allowed-tools: want a tool name, got %s", describe(item))
			}
			if err := add(item.Value, item.Line+1); err != nil {
				return nil, err
			}
		}
	default:
		return nil, errorf(n.Line+1, "%s", want)
	}
	return out, nil
}

// isToolName reports whether s matches ^[A-Za-z0-9_.:-]{1,64}$.
func isToolName(s string) bool {
	if len(s) == 0 || len(s) > maxToolNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// describe names what a node holds, for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "no value"
		case "!!str":
			return fmt.Sprintf("the string %.40q", n.Value)
		case "!!bool":
			return "the boolean " + n.Value
		case "!!int", "!!float":
			return "the number " + n.Value
		}
		return fmt.Sprintf("a %s value", n.ShortTag())
	}
	return "nothing"
}
