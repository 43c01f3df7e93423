package skill_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// byIdentifier reads the skills of the directory source by identifier.
func (b bundle) byIdentifier(t testing.TB) map[string]skill.Skill {
	t.Helper()
	ks, err := b.st.List(context.Background(), srcDir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]skill.Skill{}
	for _, k := range ks {
		out[k.Identifier] = k
	}
	return out
}

func TestSyncAddsNewSkillsDisabled(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, nil)
		b.writeSkill(t, "seo-optimieren", version("SEO optimieren", "page_read"))
		b.writeSkill(t, "inhalt", version("Inhalt verbessern"))
		for _, skip := range []string{".git", "notes"} { // hidden folder; folder without SKILL.md
			if err := os.MkdirAll(filepath.Join(b.dir, skip), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(b.dir, "README.md"), []byte("# skills"), 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := b.st.Sync(context.Background(), srcDir)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rep.Added, []string{"inhalt", "seo-optimieren"}) || len(rep.Changed)+len(rep.Orphaned) != 0 {
			t.Fatalf("report = %+v", rep)
		}
		ks := b.byIdentifier(t)
		seo := ks["seo-optimieren"]
		if len(ks) != 2 || seo.Enabled || seo.Orphaned || seo.Version.Name != "SEO optimieren" ||
			!slices.Equal(seo.Version.AllowedTools, []string{"page_read"}) || !strings.Contains(seo.RawFrontMatter, "name: SEO optimieren") {
			t.Fatalf("skills = %+v", ks)
		}
		rep, err = b.st.Sync(context.Background(), srcDir)
		if err != nil || !slices.Equal(rep.Unchanged, []string{"inhalt", "seo-optimieren"}) || len(rep.Added) != 0 {
			t.Fatalf("second sync = %+v, %v; want everything unchanged", rep, err)
		}
	})
}

func TestSyncDisablesAChangedEnabledSkillAndAuditsIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		b.writeSkill(t, "seo", version("SEO"))
		b.writeSkill(t, "quiet", version("Quiet"))
		if _, err := b.st.Sync(ctx, srcDir); err != nil {
			t.Fatal(err)
		}
		ks := b.byIdentifier(t)
		if err := b.st.SetEnabled(ctx, admin, ks["seo"].UID, true); err != nil {
			t.Fatal(err)
		}
		b.approve(t, ks["seo"].UID)
		changed := version("SEO", "content_update") // front matter only: a new digest
		b.writeSkill(t, "seo", changed)
		b.writeSkill(t, "quiet", version("Quiet 2"))
		rep, err := b.st.Sync(ctx, srcDir)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rep.Changed, []string{"quiet", "seo"}) || !slices.Equal(rep.Disabled, []string{"seo"}) {
			t.Fatalf("report = %+v", rep)
		}
		now := b.byIdentifier(t)["seo"]
		if now.Enabled || now.Digest() != changed.Normalized().Digest() {
			t.Fatalf("seo after sync: enabled %v digest %s", now.Enabled, now.Digest())
		}
		if ev := b.events(t, now.UID); ev[len(ev)-1] != skill.EventDisabledOnChange {
			t.Fatalf("audit = %v, want %s last", ev, skill.EventDisabledOnChange)
		}
		if b.instructs(t, now.UID) {
			t.Fatal("changed skill instructs on the old approval")
		}
	})
}

func TestSyncOrphansAVanishedSkillAndRestoresItDisabled(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		b.writeSkill(t, "seo", version("SEO"))
		if _, err := b.st.Sync(ctx, srcDir); err != nil {
			t.Fatal(err)
		}
		uid := b.byIdentifier(t)["seo"].UID
		if err := b.st.SetEnabled(ctx, admin, uid, true); err != nil {
			t.Fatal(err)
		}
		b.removeSkill(t, "seo")
		rep, err := b.st.Sync(ctx, srcDir)
		if err != nil || !slices.Equal(rep.Orphaned, []string{"seo"}) {
			t.Fatalf("sync = %+v, %v; want seo orphaned", rep, err)
		}
		k, _ := b.st.Get(ctx, uid)
		if !k.Orphaned || k.Enabled {
			t.Fatalf("vanished skill: orphaned %v enabled %v", k.Orphaned, k.Enabled)
		}
		if ev := b.events(t, uid); ev[len(ev)-1] != skill.EventOrphaned {
			t.Fatalf("audit = %v", ev)
		}
		if err := b.st.SetEnabled(ctx, admin, uid, true); !errors.Is(err, skill.ErrInvalid) {
			t.Fatalf("SetEnabled(orphaned) = %v, want ErrInvalid", err)
		}
		b.writeSkill(t, "seo", version("SEO"))
		rep, err = b.st.Sync(ctx, srcDir)
		if err != nil || !slices.Equal(rep.Restored, []string{"seo"}) {
			t.Fatalf("sync = %+v, %v; want seo restored", rep, err)
		}
		if k, _ := b.st.Get(ctx, uid); k.Orphaned || k.Enabled {
			t.Fatalf("restored skill: orphaned %v enabled %v, want neither", k.Orphaned, k.Enabled)
		}
	})
}

func TestSyncOfABadFolderChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		b.writeSkill(t, "seo", version("SEO"))
		if _, err := b.st.Sync(ctx, srcDir); err != nil {
			t.Fatal(err)
		}
		before := b.byIdentifier(t)
		audits := count(t, db, "skill_audit")
		big := version("Big")
		big.Body = strings.Repeat("x", skill.MaxSize)
		cases := []struct {
			name    string
			prepare func()
			want    error
		}{
			{"unknown tool", func() { b.writeSkill(t, "new", version("New", "rm_rf")) }, skill.ErrInvalid},
			{"over the size limit", func() { b.writeSkill(t, "new", big) }, skill.ErrInvalid},
			{"no front matter", func() {
				os.MkdirAll(filepath.Join(b.dir, "new"), 0o755)
				os.WriteFile(filepath.Join(b.dir, "new", "SKILL.md"), []byte("just text"), 0o644)
			}, skill.ErrInvalid},
			{"folder vanished", func() { os.RemoveAll(b.dir) }, skill.ErrSourceUnreadable},
		}
		for _, c := range cases {
			b.removeSkill(t, "seo") // would orphan seo if anything were written
			c.prepare()
			rep, err := b.st.Sync(ctx, srcDir)
			if !errors.Is(err, c.want) {
				t.Errorf("%s: Sync = %+v, %v; want %v", c.name, rep, err, c.want)
			}
			if after := b.byIdentifier(t); len(after) != 1 || after["seo"].Orphaned || after["seo"].UpdatedAt != before["seo"].UpdatedAt {
				t.Errorf("%s: skills changed: %+v", c.name, after)
			}
			if n := count(t, db, "skill_audit"); n != audits {
				t.Errorf("%s: %d audit rows, want %d", c.name, n, audits)
			}
			os.RemoveAll(b.dir)
			os.MkdirAll(b.dir, 0o755)
		}
		var perr *skill.ParseError
		b.writeSkill(t, "new", big)
		if _, err := b.st.Sync(ctx, srcDir); !errors.As(err, &perr) || !strings.Contains(err.Error(), "new/SKILL.md") {
			t.Errorf("Sync(oversized) = %v, want a *ParseError naming the file", err)
		}
		if _, err := b.st.Sync(ctx, srcBack); !errors.Is(err, skill.ErrInvalid) {
			t.Errorf("Sync(backend source) = %v, want ErrInvalid", err)
		}
	})
}
