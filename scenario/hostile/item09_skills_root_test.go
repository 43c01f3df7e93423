package hostile_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

const skillSource = "\nskillSources:\n  - {uid: 2, type: backend, title: Site, trustLevel: first_party}\n"

func skillFile(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: " + name + "\ndescription: Test skill.\nallowed-tools: [read_page]\n---\nBody.\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantRefused(t *testing.T, what string, r wt.Response, status int, code string, says ...string) {
	t.Helper()
	if r.Status != status || r.ErrorCode() != code {
		t.Errorf("%s = %d %s, want %d %s", what, r.Status, r.Body, status, code)
		return
	}
	for _, s := range says {
		if !strings.Contains(string(r.Body), s) {
			t.Errorf("%s: message %s does not say %q", what, r.Body, s)
		}
	}
}

func auditCount(t *testing.T, e *wt.Env, event string) int {
	t.Helper()
	var n int
	if err := e.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM skill_audit WHERE event = ?", event).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Without a skills root no directory source is accepted.
func TestDirectorySourcesNeedASkillsRoot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site+skillSource, nil)
		r := e.As(wt.Admin).Do("POST", "/api/skill-sources", map[string]any{"uid": 3, "type": "directory", "title": "Repo", "path": t.TempDir(), "trustLevel": "verified"})
		wantRefused(t, "directory source without a skills root", r, 400, "invalid_skill", "skills root")
		if n := count(t, e, "skill_sources"); n != 1 {
			t.Errorf("sources = %d, want 1", n)
		}
	})
}

// A directory source resolves inside the skills root;
// messages name paths relative to the root, never the root itself.
func TestDirectorySourceStaysInsideTheSkillsRoot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		root, outside := t.TempDir(), t.TempDir()
		skillFile(t, filepath.Join(root, "repo", "seo"), "SEO")
		skillFile(t, filepath.Join(outside, "evil"), "Evil")
		if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
			t.Fatal(err)
		}
		e := wt.New(t, db, wt.Site+skillSource, &wt.Options{SkillsRoot: root})
		admin := e.As(wt.Admin)
		put := func(uid int, path string) wt.Response {
			return admin.Do("POST", "/api/skill-sources", map[string]any{"uid": uid, "type": "directory", "title": "Repo", "path": path, "trustLevel": "verified"})
		}
		for _, p := range []string{"../" + filepath.Base(outside), outside, "repo/../../x"} {
			r := put(3, p)
			wantRefused(t, "source at "+p, r, 400, "invalid_skill", "inside the skills root")
			if strings.Contains(string(r.Body), root) {
				t.Errorf("source at %s: message %s names the skills root", p, r.Body)
			}
		}
		// A folder that leaves the root through a symlink is refused at sync, audited.
		if r := put(4, "escape"); r.Status != http.StatusCreated {
			t.Fatalf("source at escape = %d %s", r.Status, r.Body)
		}
		r := admin.Do("POST", "/api/skill-sources/4/sync", nil)
		wantRefused(t, "sync of a folder that leaves the root", r, 400, "invalid_skill", "escape", "inside the skills root")
		if strings.Contains(string(r.Body), root) || strings.Contains(string(r.Body), outside) {
			t.Errorf("sync message %s names an absolute path", r.Body)
		}
		if n := auditCount(t, e, "sync_refused_outside_root"); n != 1 {
			t.Errorf("audit entries of the refused sync = %d, want 1", n)
		}
		// Relative to the root, inside: accepted and synced.
		if r := put(5, "repo"); r.Status != http.StatusCreated {
			t.Fatalf("source at repo = %d %s", r.Status, r.Body)
		}
		rep := wt.Decode[wt.SyncReport](t, admin.Must("POST", "/api/skill-sources/5/sync", nil, http.StatusOK))
		if added := rep.Added; len(added) != 1 || added[0] != "seo" {
			t.Errorf("sync of repo = %+v, want seo added", rep)
		}
		if n := count(t, e, "skills"); n != 1 {
			t.Errorf("skills = %d, want 1 (nothing from outside the root)", n)
		}
	})
}

// A SKILL.md that is a symlink leaving its skill folder is
// refused with an audit entry, and the sync changes nothing.
func TestSymlinkedSkillFileLeavingItsFolderIsRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		root := t.TempDir()
		skillFile(t, filepath.Join(root, "repo", "good"), "Good")
		skillFile(t, filepath.Join(root, "private"), "Private")
		if err := os.MkdirAll(filepath.Join(root, "repo", "sneaky"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(root, "private", "SKILL.md"), filepath.Join(root, "repo", "sneaky", "SKILL.md")); err != nil {
			t.Fatal(err)
		}
		e := wt.New(t, db, wt.Site+skillSource, &wt.Options{SkillsRoot: root})
		admin := e.As(wt.Admin)
		admin.Must("POST", "/api/skill-sources", map[string]any{"uid": 3, "type": "directory", "title": "Repo", "path": "repo", "trustLevel": "verified"}, http.StatusCreated)
		r := admin.Do("POST", "/api/skill-sources/3/sync", nil)
		wantRefused(t, "sync with a symlink leaving its folder", r, 400, "invalid_skill", filepath.Join("repo", "sneaky", "SKILL.md"))
		if strings.Contains(string(r.Body), root) {
			t.Errorf("message %s names the skills root", r.Body)
		}
		if n := count(t, e, "skills"); n != 0 {
			t.Errorf("skills after the refused sync = %d, want 0", n)
		}
		if n := auditCount(t, e, "sync_refused_symlink"); n != 1 {
			t.Errorf("audit entries of the refused symlink = %d, want 1", n)
		}
		// A symlink within its own folder is fine.
		if err := os.Remove(filepath.Join(root, "repo", "sneaky", "SKILL.md")); err != nil {
			t.Fatal(err)
		}
		skillFile(t, filepath.Join(root, "repo", "sneaky", "real"), "Sneaky")
		if err := os.Symlink(filepath.Join("real", "SKILL.md"), filepath.Join(root, "repo", "sneaky", "SKILL.md")); err != nil {
			t.Fatal(err)
		}
		admin.Must("POST", "/api/skill-sources/3/sync", nil, http.StatusOK)
	})
}

// Skill identifiers are slugs, authored or synced.
func TestSkillIdentifiersAreSlugs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		root := t.TempDir()
		e := wt.New(t, db, wt.Site+skillSource, &wt.Options{SkillsRoot: root})
		admin := e.As(wt.Admin)
		md := "---\nname: X\ndescription: d\n---\nBody.\n"
		for _, id := range []string{"..", "a b", `x"y`, "Upper", "-lead", "x'y", "ü"} {
			r := admin.Do("POST", "/api/skills", map[string]any{"source": 2, "identifier": id, "markdown": md})
			wantRefused(t, "identifier "+id, r, 400, "invalid_skill", "[a-z0-9][a-z0-9-]*")
		}
		admin.Must("POST", "/api/skills", map[string]any{"source": 2, "identifier": "seo-2", "markdown": md}, http.StatusCreated)
		skillFile(t, filepath.Join(root, "repo", "Bad Name"), "Bad")
		admin.Must("POST", "/api/skill-sources", map[string]any{"uid": 3, "type": "directory", "title": "Repo", "path": "repo", "trustLevel": "verified"}, http.StatusCreated)
		r := admin.Do("POST", "/api/skill-sources/3/sync", nil)
		wantRefused(t, "sync of a folder that is no slug", r, 400, "invalid_skill", "Bad Name")
		if n := count(t, e, "skills"); n != 1 {
			t.Errorf("skills = %d, want 1", n)
		}
	})
}
