package skill_test

import (
	"context"
	"errors"
	"testing"

	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func identifiers(es []skill.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Identifier)
	}
	return out
}

func TestCatalogueListsAttachedEnabledAdmittedSkills(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, &skill.Config{AdmissionFloor: skill.Community})
		approved := b.create(t, "approved", version("Approved"))
		b.approve(t, approved.UID)
		b.create(t, "fenced", version("Fenced"))
		always := b.create(t, "always", version("Always"))
		b.approve(t, always.UID)
		if err := b.st.Attach(ctx, cfgChat, always.UID, skill.Always); err != nil {
			t.Fatal(err)
		}
		proc := version("Process")
		proc.Process = true
		process := b.create(t, "process", proc)
		b.approve(t, process.UID)
		disabled := b.create(t, "disabled", version("Disabled"))
		if err := b.st.SetEnabled(ctx, admin, disabled.UID, false); err != nil {
			t.Fatal(err)
		}
		detached := b.create(t, "detached", version("Detached"))
		if err := b.st.Detach(ctx, cfgChat, detached.UID); err != nil {
			t.Fatal(err)
		}
		// A directory skill orphaned upstream, and one of an untrusted source (below the floor).
		b.writeSkill(t, "gone", version("Gone"))
		if _, err := b.st.Sync(ctx, srcDir); err != nil {
			t.Fatal(err)
		}
		gone := b.byIdentifier(t)["gone"]
		b.st.SetEnabled(ctx, admin, gone.UID, true)
		b.st.Attach(ctx, cfgChat, gone.UID, skill.OnDemand)
		b.removeSkill(t, "gone")
		if _, err := b.st.Sync(ctx, srcDir); err != nil {
			t.Fatal(err)
		}
		if err := b.st.SourcePut(ctx, skill.Source{UID: 30, Type: skill.Backend, Title: "Low", Trust: skill.Untrusted, Enabled: true}); err != nil {
			t.Fatal(err)
		}
		low, err := b.st.Create(ctx, skill.CreateParams{Source: 30, Identifier: "low", Version: version("Low")})
		if err != nil {
			t.Fatal(err)
		}
		b.st.SetEnabled(ctx, admin, low.UID, true)
		b.st.Attach(ctx, cfgChat, low.UID, skill.OnDemand)

		cat, err := b.st.Catalogue(ctx, editor, cfgChat)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]skill.Entry{}
		for _, e := range cat {
			got[e.Identifier] = e
		}
		if len(cat) != 4 || !got["approved"].Instructs || got["fenced"].Instructs || got["always"].Mode != skill.Always ||
			!got["process"].Process || got["approved"].Name != "Approved" || got["approved"].Digest != approved.Digest() {
			t.Fatalf("Catalogue = %+v, want approved, fenced, always, process", cat)
		}
		model := forModelIDs(cat)
		if len(model) != 1 || model[0] != "approved" {
			t.Fatalf("ForModel = %v, want only the on-demand, instructing non-process skill", model)
		}
		if as, _ := b.st.Attachments(ctx, cfgChat); len(as) != 7 {
			t.Fatalf("Attachments = %+v, want 7", as)
		}
	})
}

func forModelIDs(es []skill.Entry) []string { return identifiers(skill.ForModel(es)) }

func TestCatalogueAnswersUnknownAndForbiddenAlike(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		b.create(t, "seo", version("SEO"))
		_, forbidden := b.st.Catalogue(ctx, outsider, cfgChat)
		_, unknown := b.st.Catalogue(ctx, outsider, 404)
		if !errors.Is(forbidden, skill.ErrNotFound) || !errors.Is(unknown, skill.ErrNotFound) {
			t.Fatalf("Catalogue(forbidden) = %v, Catalogue(unknown) = %v; want ErrNotFound for both", forbidden, unknown)
		}
		if _, err := b.st.Catalogue(ctx, editor, cfgAdmins); !errors.Is(err, skill.ErrNotFound) {
			t.Fatalf("editor on an admins-only configuration = %v, want ErrNotFound", err)
		}
		// Access is read live: removed from the group, the editor is refused.
		if cat, err := b.st.Catalogue(ctx, editor, cfgChat); err != nil || len(cat) != 1 {
			t.Fatalf("Catalogue(editor) = %+v, %v", cat, err)
		}
		exec(t, db, `UPDATE be_users SET group_uids = '[]' WHERE uid = 3`)
		if _, err := b.st.Catalogue(ctx, editor, cfgChat); !errors.Is(err, skill.ErrNotFound) {
			t.Fatalf("Catalogue after leaving the group = %v, want ErrNotFound", err)
		}
	})
}

func TestADisabledSourceAdmitsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		k := b.create(t, "seo", version("SEO", "page_read"))
		a := b.approve(t, k.UID)
		if err := b.st.SourcePut(ctx, skill.Source{UID: srcBack, Type: skill.Backend, Title: "Off", Trust: skill.Verified}); err != nil {
			t.Fatal(err)
		}
		cat, err := b.st.Catalogue(ctx, admin, cfgChat)
		if err != nil || len(cat) != 0 || b.instructs(t, k.UID) {
			t.Fatalf("disabled source: catalogue %+v (%v), instructs %v", cat, err, b.instructs(t, k.UID))
		}
		if _, err := b.st.PinCheck(ctx, skill.Pin{Skill: k.UID, Source: srcBack, Digest: a.Digest}); pinReason(err) != skill.PinTrustBelow {
			t.Fatalf("PinCheck = %v, want %s", err, skill.PinTrustBelow)
		}
	})
}

func TestAttachRefusesBadInput(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		k := b.create(t, "seo", version("SEO"))
		if err := b.st.Attach(ctx, cfgChat, k.UID, "sometimes"); !errors.Is(err, skill.ErrInvalid) {
			t.Errorf("Attach(bad mode) = %v", err)
		}
		if err := b.st.Attach(ctx, 99, k.UID, skill.Always); !errors.Is(err, skill.ErrNotFound) {
			t.Errorf("Attach(unknown configuration) = %v", err)
		}
		if err := b.st.Attach(ctx, cfgChat, 999, skill.Always); !errors.Is(err, skill.ErrNotFound) {
			t.Errorf("Attach(unknown skill) = %v", err)
		}
		if err := b.st.Attach(ctx, cfgChat, k.UID, skill.Always); err != nil {
			t.Fatal(err)
		}
		as, _ := b.st.Attachments(ctx, cfgChat)
		if len(as) != 1 || as[0].Mode != skill.Always {
			t.Fatalf("Attachments = %+v, want one, mode always", as)
		}
		if err := b.st.Detach(ctx, cfgAdmins, k.UID); !errors.Is(err, skill.ErrNotFound) {
			t.Errorf("Detach(not attached) = %v", err)
		}
	})
}
