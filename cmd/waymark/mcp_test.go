package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// waymark mcp without WAYMARK_TOKEN is a usage error that says what to set,
// before it opens anything.
func TestMCPWithoutATokenIsAUsageError(t *testing.T) {
	t.Setenv("WAYMARK_TOKEN", "")
	db := filepath.Join(t.TempDir(), "w.db")
	var out, errb bytes.Buffer
	code := runCLI(t.Context(), []string{"mcp", "--db", "sqlite:" + db}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "WAYMARK_TOKEN") {
		t.Fatalf("waymark mcp without a token = exit %d, stderr %q; want 2 naming WAYMARK_TOKEN", code, errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("stdout (the protocol's) got %q", out.String())
	}
	if matches, _ := filepath.Glob(db + "*"); len(matches) != 0 {
		t.Errorf("the refused command created %v", matches)
	}
}
