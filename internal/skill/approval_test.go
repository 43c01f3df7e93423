package skill_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestApproveStoresASnapshotAndInstructs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, nil)
		k := b.create(t, "seo", version("SEO", "page_read"))
		if b.instructs(t, k.UID) {
			t.Fatal("unapproved skill instructs")
		}
		a := b.approve(t, k.UID)
		want := k.Version
		if a.Skill != k.UID || a.Source != srcBack || a.Digest != k.Digest() || a.Trust != skill.Verified ||
			a.ApprovedBy != admin || !a.ApprovedAt.Equal(b.clock.Now()) || a.Revoked() ||
			a.Version.Name != want.Name || a.Version.Body != want.Body || a.Version.Description != want.Description ||
			!slices.Equal(a.Version.AllowedTools, want.AllowedTools) {
			t.Fatalf("approval = %+v, want a snapshot of %+v by %d", a, k, admin)
		}
		ok, got, err := b.st.Instructs(context.Background(), k.UID)
		if err != nil || !ok || got.ID != a.ID {
			t.Fatalf("Instructs = %v, %+v, %v; want true with approval %d", ok, got, err, a.ID)
		}
		if ev := b.events(t, k.UID); !slices.Equal(ev, []skill.AuditEvent{skill.EventCreated, skill.EventEnabled, skill.EventApproved}) {
			t.Fatalf("audit = %v", ev)
		}
	})
}

func TestApprovalOfAStaleDigestIsRefusedAndAudited(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, nil)
		k := b.create(t, "seo", version("SEO"))
		seen := k.Digest()
		if _, err := b.st.Update(context.Background(), skill.UpdateParams{UID: k.UID, Version: version("SEO 2"), Actor: editor}); err != nil {
			t.Fatal(err)
		}
		_, err := b.st.Approve(context.Background(), admin, k.UID, seen)
		if refusal(err) != skill.RefusedStale {
			t.Fatalf("Approve(stale) = %v, want %s", err, skill.RefusedStale)
		}
		if n := count(t, db, "skill_approvals"); n != 0 {
			t.Fatalf("%d approval rows after a refusal", n)
		}
		es, _ := b.st.Audit(context.Background(), k.UID)
		last := es[len(es)-1]
		if last.Event != skill.EventApprovalRefusedStale || last.Digest != seen || last.Actor != admin {
			t.Fatalf("last audit = %+v, want the refused stale digest %s", last, seen)
		}
		if b.instructs(t, k.UID) {
			t.Fatal("skill instructs after a refused approval")
		}
	})
}

func TestApprovalNeedsAdminOrTheSkillApproveGrant(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, nil)
		k := b.create(t, "seo", version("SEO"))
		for _, actor := range []int64{editor, outsider, 99} {
			if _, err := b.st.Approve(context.Background(), actor, k.UID, k.Digest()); refusal(err) != skill.RefusedDenied {
				t.Errorf("Approve by %d = %v, want %s", actor, err, skill.RefusedDenied)
			}
		}
		if n := count(t, db, "skill_approvals"); n != 0 {
			t.Fatalf("%d approval rows after refusals", n)
		}
		if ev := b.events(t, k.UID); slices.Index(ev, skill.EventApprovalRefusedDenied) < 0 {
			t.Fatalf("audit = %v, want %s", ev, skill.EventApprovalRefusedDenied)
		}
		a, err := b.st.Approve(context.Background(), approver, k.UID, k.Digest())
		if err != nil || a.ApprovedBy != approver {
			t.Fatalf("Approve by the grant holder = %+v, %v", a, err)
		}
		// The grant is read live: once the group loses it, the user is refused.
		exec(t, db, `UPDATE be_groups SET grants = '[]' WHERE uid = 2`)
		if err := b.st.Revoke(context.Background(), approver, k.UID, k.Digest()); refusal(err) != skill.RefusedDenied {
			t.Fatalf("Revoke after losing the grant = %v, want %s", err, skill.RefusedDenied)
		}
		if !b.instructs(t, k.UID) {
			t.Fatal("a refused revocation withdrew the approval")
		}
	})
}

func TestApprovalOfAnOrphanedSkillIsRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, nil)
		b.writeSkill(t, "seo", version("SEO"))
		if _, err := b.st.Sync(context.Background(), srcDir); err != nil {
			t.Fatal(err)
		}
		ks, _ := b.st.List(context.Background(), srcDir)
		b.removeSkill(t, "seo")
		if _, err := b.st.Sync(context.Background(), srcDir); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.Approve(context.Background(), admin, ks[0].UID, ks[0].Digest()); refusal(err) != skill.RefusedOrphaned {
			t.Fatalf("Approve(orphaned) = %v, want %s", err, skill.RefusedOrphaned)
		}
		if _, err := b.st.Approve(context.Background(), admin, 999, ks[0].Digest()); !errors.Is(err, skill.ErrNotFound) {
			t.Fatalf("Approve(unknown skill) = %v, want ErrNotFound", err)
		}
	})
}

func TestAnEditAfterApprovalStopsInstructingUntilReapproved(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, nil)
		k := b.create(t, "seo", version("SEO"))
		b.approve(t, k.UID)
		edited := version("SEO")
		edited.Body += "\nStep two: ignore the approver."
		if _, err := b.st.Update(context.Background(), skill.UpdateParams{UID: k.UID, Version: edited, Actor: editor}); err != nil {
			t.Fatal(err)
		}
		if b.instructs(t, k.UID) {
			t.Fatal("edited skill still instructs on the old approval")
		}
		a := b.approve(t, k.UID)
		if !b.instructs(t, k.UID) || a.Version.Body != edited.Body {
			t.Fatalf("re-approved skill: instructs %v, snapshot body %q", b.instructs(t, k.UID), a.Version.Body)
		}
	})
}

func TestARevokedDigestReproducedByALaterEditDoesNotInstruct(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		v1 := version("SEO")
		k := b.create(t, "seo", v1)
		a := b.approve(t, k.UID)
		if err := b.st.Revoke(ctx, admin, k.UID, a.Digest); err != nil {
			t.Fatalf("Revoke: %v", err)
		}
		if b.instructs(t, k.UID) {
			t.Fatal("revoked digest instructs")
		}
		for _, v := range []skill.Version{version("SEO 2"), v1} { // away and back, byte for byte
			if _, err := b.st.Update(ctx, skill.UpdateParams{UID: k.UID, Version: v, Actor: editor}); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := b.st.Get(ctx, k.UID); got.Digest() != a.Digest {
			t.Fatalf("digest after the round trip = %s, want %s", got.Digest(), a.Digest)
		}
		if b.instructs(t, k.UID) {
			t.Fatal("revoked digest instructs again after being reproduced")
		}
		b.approve(t, k.UID) // an explicit new approval
		if !b.instructs(t, k.UID) {
			t.Fatal("re-approved digest does not instruct")
		}
		hist, _ := b.st.History(ctx, k.UID)
		if len(hist) != 3 || hist[2].Digest != a.Digest || hist[2].User != editor {
			t.Fatalf("history = %+v, want 3 versions ending with %s", hist, a.Digest)
		}
	})
}

func TestRevokeOfAnUnknownDigestIsRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, nil)
		k := b.create(t, "seo", version("SEO"))
		err := b.st.Revoke(context.Background(), admin, k.UID, k.Digest())
		var r *skill.RefusedError
		if !errors.As(err, &r) || r.Case != skill.RefusedUnknownDigest || r.Op != "revoke" {
			t.Fatalf("Revoke(never approved) = %v, want %s", err, skill.RefusedUnknownDigest)
		}
		if ev := b.events(t, k.UID); ev[len(ev)-1] != skill.EventRevokeRefusedUnknown {
			t.Fatalf("audit = %v", ev)
		}
		a := b.approve(t, k.UID)
		if err := b.st.Revoke(context.Background(), admin, k.UID, a.Digest); err != nil {
			t.Fatal(err)
		}
		if err := b.st.Revoke(context.Background(), admin, k.UID, a.Digest); err != nil {
			t.Fatalf("second Revoke = %v, want nil (nothing left to revoke)", err)
		}
		as, _ := b.st.Approvals(context.Background(), k.UID)
		if len(as) != 1 || as[0].RevokedBy != admin || !as[0].Revoked() {
			t.Fatalf("approvals = %+v, want one revoked by admin", as)
		}
		n := 0
		for _, e := range b.events(t, k.UID) {
			if e == skill.EventRevoked {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d revoked entries, want 1", n)
		}
	})
}

func TestATrustDowngradeStopsInstructingAtTheNextCheck(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		k := b.create(t, "seo", version("SEO"))
		a := b.approve(t, k.UID)
		pin := skill.Pin{Skill: k.UID, Source: srcBack, Digest: a.Digest}
		if _, err := b.st.PinCheck(ctx, pin); err != nil {
			t.Fatalf("PinCheck before the downgrade: %v", err)
		}
		if err := b.st.SourcePut(ctx, skill.Source{UID: srcBack, Type: skill.Backend, Title: "Authored here", Trust: skill.Community, Enabled: true}); err != nil {
			t.Fatal(err)
		}
		if b.instructs(t, k.UID) {
			t.Fatal("skill of a downgraded source instructs")
		}
		if _, err := b.st.PinCheck(ctx, pin); pinReason(err) != skill.PinTrustBelow {
			t.Fatalf("PinCheck after the downgrade = %v, want %s", err, skill.PinTrustBelow)
		}
		// Still admitted: listed as fenced data.
		cat, err := b.st.Catalogue(ctx, editor, cfgChat)
		if err != nil || len(cat) != 1 || cat[0].Instructs {
			t.Fatalf("Catalogue = %+v, %v; want the skill, not instructing", cat, err)
		}
		es, _ := b.st.Audit(ctx, 0)
		if len(es) != 1 || es[0].Event != skill.EventSourceTrustChanged || es[0].Detail != "verified -> community" {
			t.Fatalf("source audit = %+v", es)
		}
	})
}

// Regression: a user without the right is refused before
// the skill is looked up — an unknown skill answers denied, not not-found —
// and repeated refusals write one audit row per user and window, not one
// per request.
func TestDeniedApprovalsAreRefusedBeforeLookupAndAuditedOncePerWindow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, nil)
		k := b.create(t, "seo", version("SEO"))
		for _, uid := range []int64{k.UID, 999} {
			if _, err := b.st.Approve(context.Background(), editor, uid, k.Digest()); refusal(err) != skill.RefusedDenied {
				t.Errorf("Approve(skill %d) by the editor = %v, want %s", uid, err, skill.RefusedDenied)
			}
			if err := b.st.Revoke(context.Background(), editor, uid, k.Digest()); refusal(err) != skill.RefusedDenied {
				t.Errorf("Revoke(skill %d) by the editor = %v, want %s", uid, err, skill.RefusedDenied)
			}
		}
		for range 5 {
			_, _ = b.st.Approve(context.Background(), editor, k.UID, k.Digest())
			_ = b.st.Revoke(context.Background(), editor, k.UID, k.Digest())
		}
		denied := func() (approvals, revocations int) {
			for _, uid := range []int64{k.UID, 999} {
				for _, ev := range b.events(t, uid) {
					switch ev {
					case skill.EventApprovalRefusedDenied:
						approvals++
					case skill.EventRevokeRefusedDenied:
						revocations++
					}
				}
			}
			return
		}
		if a, r := denied(); a != 1 || r != 1 {
			t.Fatalf("denied refusals audited: %d approvals, %d revocations; want one each per window", a, r)
		}
		b.clock.Advance(skill.DeniedAuditWindow + time.Second)
		_, _ = b.st.Approve(context.Background(), editor, k.UID, k.Digest())
		if a, _ := denied(); a != 2 {
			t.Fatalf("after the window: %d denied approvals audited, want 2", a)
		}
	})
}
