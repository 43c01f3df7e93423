package skill_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func list(tools ...string) skill.AllowList {
	return skill.AllowList{}.WithDeclaration(append([]string{}, tools...))
}

func TestAllowListIntersectNeverGainsATool(t *testing.T) {
	none := skill.AllowList{}
	cases := []struct {
		name        string
		stored, now skill.AllowList
		want        skill.AllowList
	}{
		{"undeclared both", none, none, none},
		{"nil stored takes the live list", none, list("a"), list("a")},
		{"nil live keeps the stored list", list("a"), none, list("a")},
		{"live gained a tool", list("a"), list("a", "b"), list("a")},
		{"live lost a tool", list("a", "b"), list("b"), list("b")},
		{"declared nothing stays nothing", list(), list("a"), list()},
	}
	for _, c := range cases {
		got := c.stored.Intersect(c.now)
		if got.Declared != c.want.Declared || !slices.Equal(got.Tools, c.want.Tools) {
			t.Errorf("%s: Intersect = %+v, want %+v", c.name, got, c.want)
		}
		for _, tool := range []string{"a", "b"} {
			if got.Allows(tool) && !c.stored.Allows(tool) {
				t.Errorf("%s: the intersection allows %s, the stored list does not", c.name, tool)
			}
		}
	}
}

func TestAllowListDeclarationsAndJSON(t *testing.T) {
	a := skill.AllowList{}
	if !a.Allows("anything") || a.WithDeclaration(nil).Declared {
		t.Fatal("an undeclared list restricts, or a nil declaration declares")
	}
	a = a.WithDeclaration([]string{"b", "a"}).WithDeclaration([]string{"a", "c"})
	if !slices.Equal(a.Tools, []string{"a", "b", "c"}) || a.Allows("d") {
		t.Fatalf("union = %+v", a)
	}
	if empty := (skill.AllowList{}).WithDeclaration([]string{}); !empty.Declared || empty.Allows("a") {
		t.Fatalf("declared empty = %+v, want it to block everything", empty)
	}
	for _, in := range []skill.AllowList{{}, list(), list("a", "b")} {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out skill.AllowList
		if err := json.Unmarshal(b, &out); err != nil || out.Declared != in.Declared || !slices.Equal(out.Tools, in.Tools) {
			t.Errorf("round trip of %+v via %s = %+v, %v", in, b, out, err)
		}
	}
	if b, _ := json.Marshal(skill.AllowList{}); string(b) != "null" {
		t.Errorf("undeclared JSON = %s, want null", b)
	}
}

func TestAllowListForUnitesTheEffectiveDeclarations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		a, err := b.st.AllowListFor(ctx, cfgChat)
		if err != nil || a.Declared {
			t.Fatalf("no skills: %+v, %v; want undeclared", a, err)
		}
		// A directory skill declaring nothing contributes nothing.
		b.writeSkill(t, "free", version("Free"))
		b.writeSkill(t, "reader", version("Reader", "page_read"))
		if _, err := b.st.Sync(ctx, srcDir); err != nil {
			t.Fatal(err)
		}
		ks := b.byIdentifier(t)
		for _, id := range []string{"free", "reader"} {
			b.st.SetEnabled(ctx, admin, ks[id].UID, true)
		}
		b.st.Attach(ctx, cfgChat, ks["free"].UID, skill.Always)
		if a, _ := b.st.AllowListFor(ctx, cfgChat); a.Declared {
			t.Fatalf("undeclaring skill: %+v", a)
		}
		b.st.Attach(ctx, cfgChat, ks["reader"].UID, skill.OnDemand)
		if a, _ := b.st.AllowListFor(ctx, cfgChat); !a.Declared || !slices.Equal(a.Tools, []string{"page_read"}) {
			t.Fatalf("directory declaration: %+v", a)
		}
		// A never-approved backend skill contributes a declared empty list: nothing new.
		back := b.create(t, "writer", version("Writer", "content_update"))
		if a, _ := b.st.AllowListFor(ctx, cfgChat); !slices.Equal(a.Tools, []string{"page_read"}) {
			t.Fatalf("never-approved backend skill: %+v, want page_read only", a)
		}
		// Approved: the snapshot's tools; an unapproved edit does not change them.
		b.approve(t, back.UID)
		b.st.Update(ctx, skill.UpdateParams{UID: back.UID, Version: version("Writer", "content_update", "choose")})
		if a, _ := b.st.AllowListFor(ctx, cfgChat); !slices.Equal(a.Tools, []string{"content_update", "page_read"}) {
			t.Fatalf("approved backend skill: %+v, want content_update and page_read", a)
		}
		// A process skill joins only through WithDeclaration.
		proc := version("Tour", "choose")
		proc.Process = true
		b.create(t, "tour", proc)
		if a, _ := b.st.AllowListFor(ctx, cfgChat); a.Allows("choose") {
			t.Fatalf("attached process skill widened the list: %+v", a)
		}
		// A disabled skill drops out; a resume intersects and so cannot gain.
		stored, _ := b.st.AllowListFor(ctx, cfgChat)
		b.st.SetEnabled(ctx, admin, ks["reader"].UID, false)
		live, _ := b.st.AllowListFor(ctx, cfgChat)
		if got := stored.Intersect(live); !slices.Equal(got.Tools, []string{"content_update"}) {
			t.Fatalf("resume = %+v, want content_update only", got)
		}
	})
}
