package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's "your own data" commands run as shown on the
// example files of the repository: migrate, import examples/…, token.
func TestReadmeOwnDataExampleImportsAsShown(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "For your own data")
	if !ok {
		t.Fatal(`README has no "For your own data" section`)
	}
	_, block, _ = strings.Cut(block, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	db := "sqlite:" + filepath.Join(t.TempDir(), "waymark.db")
	ran := map[string]bool{}
	for _, line := range strings.Split(block, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "./waymark" || f[1] == "serve" {
			continue
		}
		args := f[1:]
		for i := range args {
			switch {
			case strings.HasPrefix(args[i], "sqlite:"):
				args[i] = db
			case strings.HasPrefix(args[i], "examples/"):
				args[i] = filepath.Join("..", "..", args[i])
			}
		}
		code, out, stderr := cli(t, args...)
		if code != 0 {
			t.Fatalf("README: waymark %s exited %d: %s", strings.Join(args, " "), code, stderr)
		}
		if args[0] == "token" && strings.TrimSpace(out) == "" {
			t.Errorf("README: waymark token printed no token")
		}
		ran[args[0]] = true
	}
	for _, c := range []string{"migrate", "import", "token"} {
		if !ran[c] {
			t.Errorf("README's own-data example has no waymark %s line", c)
		}
	}
}
