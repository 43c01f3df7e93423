package httpapi_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"waymark/internal/fault"
	"waymark/internal/httpapi"
	// The TYPO3 source declares its own wire codes (typo3_unavailable,
	// mfa_required) that every server beside TYPO3 sends.
	_ "waymark/internal/typo3/live"
)

// documentedCodes reads the table of docs/API.md's "Errors" section:
// code → status.
func documentedCodes(t *testing.T) map[string]int {
	t.Helper()
	b, err := os.ReadFile("../../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n### Errors")
	if start < 0 {
		t.Fatal(`docs/API.md has no "### Errors" section`)
	}
	section := text[start+1:]
	if end := strings.Index(section[1:], "\n#"); end >= 0 {
		section = section[:end+1]
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\| (\\d{3}) \\|")
	docs := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		st, _ := strconv.Atoi(m[2])
		if _, dup := docs[m[1]]; dup {
			t.Errorf("docs/API.md Errors: %s is listed twice", m[1])
		}
		docs[m[1]] = st
	}
	if len(docs) == 0 {
		t.Fatal("docs/API.md Errors: no code rows")
	}
	return docs
}

// TestEveryWireCodeIsDocumented checks the one list of wire codes (the
// fault declarations linked into the server) against docs/API.md: every
// code the server can send is documented with its status, and every code
// documented is declared.
func TestEveryWireCodeIsDocumented(t *testing.T) {
	docs := documentedCodes(t)
	declared := fault.Codes()
	for _, code := range fault.SortedCodes() {
		if strings.HasPrefix(code, "test_") {
			continue // declared by tests
		}
		st, ok := docs[code]
		switch {
		case !ok:
			t.Errorf("code %s (%s, %d) is declared but not in docs/API.md Errors", code, declared[code], httpapi.StatusOf(declared[code]))
		case st != httpapi.StatusOf(declared[code]):
			t.Errorf("code %s: docs/API.md says %d, the server sends %d", code, st, httpapi.StatusOf(declared[code]))
		}
	}
	for code := range docs {
		if _, ok := declared[code]; !ok {
			t.Errorf("docs/API.md Errors documents %s, which no package declares", code)
		}
	}
}
