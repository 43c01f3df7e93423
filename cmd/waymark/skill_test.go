package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"waymark/internal/skill"
	"waymark/internal/store"
)

// allConfigs lets every actor use every configuration; the skill CLI never asks.
type allConfigs struct{}

func (allConfigs) ActorMayUse(context.Context, int64, int64) (bool, error) { return true, nil }

// skillStore opens the CLI's database directly, for seeding and checking.
func skillStore(t *testing.T, url string) (*store.DB, *skill.Store) {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := skill.NewStore(db, func(string) bool { return true }, allConfigs{}, &skill.Config{Root: os.Getenv("WAYMARK_SKILLS_ROOT")})
	if err != nil {
		t.Fatal(err)
	}
	return db, st
}

// skillCLISetup is a migrated SQLite database with an administrator and a
// plain editor, and a directory source (uid 3) on a folder with one skill.
func skillCLISetup(t *testing.T) (url, dir string) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("WAYMARK_SKILLS_ROOT", tmp)
	url = "sqlite:" + filepath.Join(tmp, "w.db")
	fx := filepath.Join(tmp, "users.yaml")
	users := "users: [{uid: 1, username: admin, admin: true}, {uid: 2, username: otto}]\n"
	if err := os.WriteFile(fx, []byte(users), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cli(t, "import", "--db", url, fx); code != 0 {
		t.Fatalf("import = %d: %s", code, stderr)
	}
	dir = filepath.Join(tmp, "skills")
	if err := os.MkdirAll(filepath.Join(dir, "alpha"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: Alpha\ndescription: First skill.\n---\nDo the first thing.\n"
	if err := os.WriteFile(filepath.Join(dir, "alpha", "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	_, st := skillStore(t, url)
	if err := st.SourcePut(context.Background(), skill.Source{UID: 3, Type: skill.Directory, Title: "Repo", Path: dir,
		Trust: skill.Verified, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	return url, dir
}

func TestSkillSyncListApproveRevokeFromTheCommandLine(t *testing.T) {
	url, _ := skillCLISetup(t)
	code, out, stderr := cli(t, "skill", "sync", "--db", url, "3")
	if code != 0 || !strings.Contains(out, "synced source 3: added 1") || !strings.Contains(out, "added: alpha") {
		t.Fatalf("skill sync = %d, out %q, err %q", code, out, stderr)
	}
	code, out, _ = cli(t, "skill", "sync", "--db", url, "3")
	if code != 0 || !strings.Contains(out, "added 0") || !strings.Contains(out, "unchanged: alpha") {
		t.Fatalf("second skill sync = %d, %q", code, out)
	}
	_, st := skillStore(t, url)
	ks, err := st.List(context.Background(), 3)
	if err != nil || len(ks) != 1 || ks[0].Identifier != "alpha" || ks[0].Enabled {
		t.Fatalf("stored skills after sync = %+v, %v", ks, err)
	}
	digest := ks[0].Digest()
	code, out, _ = cli(t, "skill", "list", "--db", url)
	if code != 0 || !strings.Contains(out, "alpha") || !strings.Contains(out, "disabled") || !strings.Contains(out, digest) {
		t.Fatalf("skill list = %d, %q", code, out)
	}

	code, _, stderr = cli(t, "skill", "approve", "--db", url, "--as", "otto", "1", digest)
	if code == 0 || !strings.Contains(stderr, "denied") {
		t.Fatalf("approval by otto = %d, %q", code, stderr)
	}
	code, out, stderr = cli(t, "skill", "approve", "--db", url, "--as", "admin", "1", digest)
	if code != 0 || !strings.Contains(out, "approved skill 1") {
		t.Fatalf("approval by admin = %d, %q, %q", code, out, stderr)
	}
	if ok, _, err := st.Instructs(context.Background(), 1); err != nil || !ok {
		t.Fatalf("after the CLI approval the skill instructs = %v, %v", ok, err)
	}
	code, out, stderr = cli(t, "skill", "revoke", "--db", url, "--as", "admin", "1", digest)
	if code != 0 || !strings.Contains(out, "revoked skill 1") {
		t.Fatalf("revoke = %d, %q, %q", code, out, stderr)
	}
	if ok, _, err := st.Instructs(context.Background(), 1); err != nil || ok {
		t.Fatalf("after the CLI revocation the skill instructs = %v, %v", ok, err)
	}
}

func TestSkillCommandRefusesBadInputWithOneLine(t *testing.T) {
	url, dir := skillCLISetup(t)
	zero := "v1:" + strings.Repeat("0", 64)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"skill"}, "want a subcommand"},
		{"unknown subcommand", []string{"skill", "frob"}, `unknown subcommand "frob"`},
		{"sync without a source", []string{"skill", "sync", "--db", url}, "takes 1 argument"},
		{"sync of a uid that is no number", []string{"skill", "sync", "--db", url, "three"}, `"three" is not a uid`},
		{"sync of an unknown source", []string{"skill", "sync", "--db", url, "99"}, "skill source 99: not found"},
		{"list with an argument", []string{"skill", "list", "--db", url, "x"}, "takes 0 argument"},
		{"approve without --as", []string{"skill", "approve", "--db", url, "1", zero}, "--as USERNAME"},
		{"sync with --as", []string{"skill", "sync", "--db", url, "--as", "admin", "3"}, "--as USERNAME"},
		{"approve as an unknown user", []string{"skill", "approve", "--db", url, "--as", "nobody", "1", zero}, `no user "nobody"`},
		{"approve of an unknown skill", []string{"skill", "approve", "--db", url, "--as", "admin", "7", zero}, "skill 7: not found"},
		{"revoke of an unknown digest", []string{"skill", "revoke", "--db", url, "--as", "admin", "7", zero}, "skill 7: not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := cli(t, c.args...)
			if code == 0 {
				t.Fatalf("waymark %v exited 0", c.args)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q does not contain %q", stderr, c.want)
			}
			if first := strings.SplitN(strings.TrimSpace(stderr), "\n", 2)[0]; !strings.HasPrefix(first, "waymark skill") {
				t.Errorf("first line %q is not the reason", first)
			}
		})
	}
	// A folder that vanished is an error and changes nothing.
	if code, _, stderr := cli(t, "skill", "sync", "--db", url, "3"); code != 0 {
		t.Fatalf("sync = %d: %s", code, stderr)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cli(t, "skill", "sync", "--db", url, "3")
	if code != 1 || !strings.Contains(stderr, "unreadable") {
		t.Fatalf("sync of a vanished folder = %d, %q", code, stderr)
	}
	_, st := skillStore(t, url)
	if ks, err := st.List(context.Background(), 3); err != nil || len(ks) != 1 || ks[0].Orphaned {
		t.Errorf("a failed sync changed the skills: %+v, %v", ks, err)
	}
}
