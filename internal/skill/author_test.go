package skill_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestSkillCreateStoresADisabledSkillWithHistory(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		v := version("SEO", "page_read", "choose", "page_read")
		k, err := b.st.Create(ctx, skill.CreateParams{Source: srcBack, Identifier: "seo", Version: v, Actor: editor})
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.st.Get(ctx, k.UID)
		if err != nil || got.Enabled || got.Orphaned || got.Source != srcBack || got.Identifier != "seo" ||
			!slices.Equal(got.Version.AllowedTools, []string{"choose", "page_read"}) || got.Digest() != v.Normalized().Digest() ||
			!strings.Contains(got.RawFrontMatter, "allowed-tools:") {
			t.Fatalf("Get = %+v, %v", got, err)
		}
		hist, _ := b.st.History(ctx, k.UID)
		if len(hist) != 1 || hist[0].User != editor || hist[0].Digest != got.Digest() {
			t.Fatalf("history = %+v", hist)
		}
		if _, err := b.st.Create(ctx, skill.CreateParams{Source: srcBack, Identifier: "seo", Version: v}); !errors.Is(err, skill.ErrInvalid) {
			t.Fatalf("duplicate identifier = %v, want ErrInvalid", err)
		}
		// Fixtures may name the uid; later skills get new ones.
		fixed, err := b.st.Create(ctx, skill.CreateParams{UID: 500, Source: srcBack, Identifier: "fixed", Version: v})
		if err != nil || fixed.UID != 500 {
			t.Fatalf("Create(uid 500) = %+v, %v", fixed, err)
		}
		next, err := b.st.Create(ctx, skill.CreateParams{Source: srcBack, Identifier: "next", Version: v})
		if err != nil || next.UID <= 500 {
			t.Fatalf("Create after uid 500 = %d, %v", next.UID, err)
		}
	})
}

func TestSkillCreateRefusesBadInputAndStoresNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		big := version("Big")
		big.Body = strings.Repeat("y", skill.MaxSize)
		cases := []struct {
			name string
			p    skill.CreateParams
			want error
		}{
			{"unknown tool", skill.CreateParams{Source: srcBack, Identifier: "a", Version: version("A", "page_read", "shell")}, skill.ErrInvalid},
			{"over the size limit", skill.CreateParams{Source: srcBack, Identifier: "a", Version: big}, skill.ErrInvalid},
			{"no name", skill.CreateParams{Source: srcBack, Identifier: "a", Version: skill.Version{Description: "d", Body: "b"}}, skill.ErrInvalid},
			{"empty identifier", skill.CreateParams{Source: srcBack, Identifier: " ", Version: version("A")}, skill.ErrInvalid},
			{"slash in identifier", skill.CreateParams{Source: srcBack, Identifier: "a/b", Version: version("A")}, skill.ErrInvalid},
			{"directory source", skill.CreateParams{Source: srcDir, Identifier: "a", Version: version("A")}, skill.ErrInvalid},
			{"unknown source", skill.CreateParams{Source: 77, Identifier: "a", Version: version("A")}, skill.ErrNotFound},
		}
		for _, c := range cases {
			if _, err := b.st.Create(ctx, c.p); !errors.Is(err, c.want) {
				t.Errorf("%s: Create = %v, want %v", c.name, err, c.want)
			}
		}
		var inv *skill.InvalidError
		_, err := b.st.Create(ctx, cases[0].p)
		if !errors.As(err, &inv) || inv.Field != "allowed-tools" || !strings.Contains(err.Error(), `"shell"`) {
			t.Errorf("unknown tool error = %v, want one naming allowed-tools and the tool", err)
		}
		for _, table := range []string{"skills", "skill_history", "skill_audit"} {
			if n := count(t, db, table); n != 0 {
				t.Errorf("%s holds %d rows after refusals", table, n)
			}
		}
	})
}

func TestSkillUpdateStoresANewVersion(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		k := b.create(t, "seo", version("SEO"))
		if _, err := b.st.Update(ctx, skill.UpdateParams{UID: k.UID, Version: version("SEO"), Actor: editor}); err != nil {
			t.Fatal(err)
		}
		if hist, _ := b.st.History(ctx, k.UID); len(hist) != 1 {
			t.Fatalf("an edit without a change wrote history: %+v", hist)
		}
		got, err := b.st.Update(ctx, skill.UpdateParams{UID: k.UID, Version: version("SEO neu"), Actor: admin})
		if err != nil || got.Version.Name != "SEO neu" || !got.Enabled {
			t.Fatalf("Update = %+v, %v", got, err)
		}
		hist, _ := b.st.History(ctx, k.UID)
		if len(hist) != 2 || hist[1].User != admin || hist[1].Version.Name != "SEO neu" {
			t.Fatalf("history = %+v", hist)
		}
		if _, err := b.st.Update(ctx, skill.UpdateParams{UID: k.UID, Version: version("X", "nope")}); !errors.Is(err, skill.ErrInvalid) {
			t.Fatalf("update naming an unknown tool = %v, want ErrInvalid", err)
		}
		if now, _ := b.st.Get(ctx, k.UID); now.Version.Name != "SEO neu" {
			t.Fatalf("refused update changed the skill: %+v", now)
		}
		b.writeSkill(t, "synced", version("Synced"))
		if _, err := b.st.Sync(ctx, srcDir); err != nil {
			t.Fatal(err)
		}
		synced := b.byIdentifier(t)["synced"]
		if _, err := b.st.Update(ctx, skill.UpdateParams{UID: synced.UID, Version: version("Mine")}); !errors.Is(err, skill.ErrInvalid) {
			t.Fatalf("editing a directory skill = %v, want ErrInvalid", err)
		}
	})
}

func TestSourcePutValidatesAndKeepsTheType(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		bad := []skill.Source{
			{UID: 0, Type: skill.Backend, Title: "t", Trust: skill.Verified},
			{UID: 5, Type: "git", Title: "t", Trust: skill.Verified},
			{UID: 5, Type: skill.Backend, Title: "", Trust: skill.Verified},
			{UID: 5, Type: skill.Backend, Title: "t", Trust: "trusted"},
			{UID: 5, Type: skill.Directory, Title: "t", Trust: skill.Verified},
			{UID: 5, Type: skill.Backend, Title: "t", Path: "/tmp", Trust: skill.Verified},
			{UID: srcBack, Type: skill.Directory, Title: "t", Path: "/tmp", Trust: skill.Verified},
		}
		for _, src := range bad {
			if err := b.st.SourcePut(ctx, src); !errors.Is(err, skill.ErrInvalid) {
				t.Errorf("SourcePut(%+v) = %v, want ErrInvalid", src, err)
			}
		}
		if got, err := b.st.SourceGet(ctx, srcBack); err != nil || got.Type != skill.Backend {
			t.Fatalf("SourceGet = %+v, %v", got, err)
		}
		if list, err := b.st.SourceList(ctx); err != nil || len(list) != 2 {
			t.Fatalf("SourceList = %+v, %v; want the two seeded sources", list, err)
		}
		if _, err := b.st.SourceGet(ctx, 5); !errors.Is(err, skill.ErrNotFound) {
			t.Fatalf("SourceGet(5) = %v, want ErrNotFound", err)
		}
	})
}

func TestNewStoreChecksTheThresholds(t *testing.T) {
	db := storetest.SQLite(t)
	known := func(string) bool { return true }
	if _, err := skill.NewStore(db, known, nil, nil); err == nil {
		t.Error("NewStore without configuration access succeeded")
	}
	setup(t, db, nil)
	for _, cfg := range []skill.Config{{InstructionThreshold: "high"}, {AdmissionFloor: "low"}} {
		if _, err := skill.NewStore(db, known, fakeAccess{}, &cfg); err == nil {
			t.Errorf("NewStore(%+v) succeeded", cfg)
		}
	}
	st, err := skill.NewStore(db, known, fakeAccess{}, &skill.Config{InstructionThreshold: skill.Community, AdmissionFloor: skill.Verified})
	if err != nil || st.InstructionThreshold() != skill.Verified {
		t.Fatalf("threshold below the floor = %v, %v; want it raised to verified", st.InstructionThreshold(), err)
	}
	if st, _ := skill.NewStore(db, known, fakeAccess{}, nil); st.InstructionThreshold() != skill.Verified || st.AdmissionFloor() != skill.Untrusted {
		t.Fatalf("defaults = %s, %s", st.InstructionThreshold(), st.AdmissionFloor())
	}
}

type fakeAccess struct{}

func (fakeAccess) ActorMayUse(context.Context, int64, int64) (bool, error) { return true, nil }
