package skill_test

import (
	"context"
	"testing"

	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestPinCheckReasonsInOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		k := b.create(t, "seo", version("SEO"))
		a := b.approve(t, k.UID)
		pin := skill.Pin{Skill: k.UID, Source: srcBack, Digest: a.Digest}
		check := func(want skill.PinReason) {
			t.Helper()
			got, err := b.st.PinCheck(ctx, pin)
			if pinReason(err) != want || (want == "" && (err != nil || got.ID != a.ID)) {
				t.Fatalf("PinCheck = %+v, %v; want reason %q", got, err, want)
			}
		}
		check("")
		// A newer version does not end the pin: the held version stays usable.
		if _, err := b.st.Update(ctx, skill.UpdateParams{UID: k.UID, Version: version("SEO 2")}); err != nil {
			t.Fatal(err)
		}
		check("")
		// Break every condition, from the last reason to the first; each time the earliest shows.
		b.st.SourcePut(ctx, skill.Source{UID: srcBack, Type: skill.Backend, Title: "t", Trust: skill.Community, Enabled: true})
		check(skill.PinTrustBelow)
		b.st.SetEnabled(ctx, admin, k.UID, false) // disabled fails like orphaned
		check(skill.PinOrphaned)
		exec(t, db, "UPDATE skills SET source_uid = ? WHERE uid = ?", srcDir, k.UID) // no longer in the pinned source
		check(skill.PinSkillGone)
		exec(t, db, "DELETE FROM skill_attachments")
		exec(t, db, "DELETE FROM skills")
		check(skill.PinSkillGone)
		exec(t, db, "UPDATE skill_approvals SET body = 'tampered'")
		check(skill.PinSnapshotMismatch)
		exec(t, db, "UPDATE skill_approvals SET revoked_by = 1, revoked_at = 1") // the skill is gone, so not through Revoke
		check(skill.PinRevoked)
		if _, err := b.st.PinCheck(ctx, skill.Pin{Skill: 1234, Source: srcBack, Digest: a.Digest}); pinReason(err) != skill.PinRevoked {
			t.Fatalf("PinCheck(never approved) = %v, want %s", err, skill.PinRevoked)
		}
	})
}

func TestPinCheckOfAnOrphanedSkill(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		b.writeSkill(t, "tour", version("Tour"))
		b.st.Sync(ctx, srcDir)
		k := b.byIdentifier(t)["tour"]
		b.st.SetEnabled(ctx, admin, k.UID, true)
		a := b.approve(t, k.UID)
		pin := skill.Pin{Skill: k.UID, Source: srcDir, Digest: a.Digest}
		if _, err := b.st.PinCheck(ctx, pin); err != nil {
			t.Fatal(err)
		}
		b.removeSkill(t, "tour")
		b.st.Sync(ctx, srcDir)
		_, err := b.st.PinCheck(ctx, pin)
		if pinReason(err) != skill.PinOrphaned {
			t.Fatalf("PinCheck(orphaned) = %v, want %s", err, skill.PinOrphaned)
		}
		if pe := err.(*skill.PinError); pe.Name != "Tour" {
			t.Fatalf("PinError name = %q, want the approved name", pe.Name)
		}
	})
}

func TestARevokedPinFailsAndAReapprovalHoldsAgain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		k := b.create(t, "seo", version("SEO"))
		a := b.approve(t, k.UID)
		pin := skill.Pin{Skill: k.UID, Source: srcBack, Digest: a.Digest}
		if err := b.st.Revoke(ctx, approver, k.UID, a.Digest); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.PinCheck(ctx, pin); pinReason(err) != skill.PinRevoked {
			t.Fatalf("PinCheck after Revoke = %v, want %s", err, skill.PinRevoked)
		}
		again := b.approve(t, k.UID)
		if got, err := b.st.PinCheck(ctx, pin); err != nil || got.ID != again.ID {
			t.Fatalf("PinCheck after re-approval = %+v, %v; want approval %d", got, err, again.ID)
		}
	})
}
