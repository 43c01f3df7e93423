package skill_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// events returns the audit events of a skill, oldest first.
func events(t *testing.T, b bundle, uid int64) []skill.AuditEvent {
	t.Helper()
	entries, err := b.st.Audit(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	var out []skill.AuditEvent
	for _, e := range entries {
		out = append(out, e.Event)
	}
	return out
}

// The …Tx forms write in the caller's transaction: a rolled-back
// transaction leaves no skill, history, approval or audit entry; a committed
// one leaves what the standalone forms leave, in one commit.
func TestTxFormsWriteSkillsInTheCallersTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		v := version("SEO", "page_read", "page_read")
		write := func(tx *store.Tx) error {
			k, err := b.st.CreateTx(ctx, tx, skill.CreateParams{UID: 700, Source: srcBack, Identifier: "seo", Version: v})
			if err != nil {
				return err
			}
			if err := b.st.SetEnabledTx(ctx, tx, admin, k.UID, true); err != nil {
				return err
			}
			edited := version("SEO 2", "page_read", "page_read")
			if k, err = b.st.UpdateTx(ctx, tx, skill.UpdateParams{UID: k.UID, Identifier: "seo-2", Version: edited}); err != nil {
				return err
			}
			_, err = b.st.ApproveTx(ctx, tx, approver, k.UID, k.Digest())
			return err
		}
		boom := errors.New("roll back")
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := write(tx); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatalf("InTx = %v", err)
		}
		if _, err := b.st.Get(ctx, 700); !errors.Is(err, skill.ErrNotFound) {
			t.Errorf("after the rollback Get = %v, want ErrNotFound", err)
		}
		if got := events(t, b, 700); len(got) != 0 {
			t.Errorf("after the rollback the audit holds %q", got)
		}
		commits := db.Commits()
		if err := db.InTx(ctx, write); err != nil {
			t.Fatal(err)
		}
		if n := db.Commits() - commits; n != 1 {
			t.Errorf("the writes took %d commits, want 1", n)
		}
		k, err := b.st.Get(ctx, 700)
		if err != nil || !k.Enabled || k.Identifier != "seo-2" || k.Version.Name != "SEO 2" {
			t.Fatalf("Get = %+v, %v", k, err)
		}
		want := []skill.AuditEvent{skill.EventCreated, skill.EventEnabled, skill.EventEdited, skill.EventApproved}
		if got := events(t, b, 700); !slices.Equal(got, want) {
			t.Errorf("audit = %q, want %q", got, want)
		}
		approvals, err := b.st.ApprovalsTx(ctx, db, 700)
		if err != nil || len(approvals) != 1 || approvals[0].Digest != k.Digest() || approvals[0].ApprovedBy != approver {
			t.Errorf("approvals = %+v, %v", approvals, err)
		}
		// A rename to an identifier the source has is refused and changes nothing.
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := b.st.CreateTx(ctx, tx, skill.CreateParams{UID: 701, Source: srcBack, Identifier: "other", Version: v}); err != nil {
				return err
			}
			_, err := b.st.UpdateTx(ctx, tx, skill.UpdateParams{UID: 701, Identifier: "seo-2", Version: v})
			return err
		}); !errors.Is(err, skill.ErrInvalid) {
			t.Errorf("rename onto a taken identifier = %v, want ErrInvalid", err)
		}
		if _, err := b.st.Get(ctx, 701); !errors.Is(err, skill.ErrNotFound) {
			t.Errorf("after the refused rename Get(701) = %v, want ErrNotFound", err)
		}
	})
}

// ApproveTx refuses as Approve does, and audits the refusal in the caller's
// transaction.
func TestApproveTxRefusesAndAuditsInTheTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		b := setup(t, db, nil)
		k, err := b.st.Create(ctx, skill.CreateParams{Source: srcBack, Identifier: "seo", Version: version("SEO", "page_read")})
		if err != nil {
			t.Fatal(err)
		}
		var re *skill.RefusedError
		err = db.InTx(ctx, func(tx *store.Tx) error {
			_, err := b.st.ApproveTx(ctx, tx, approver, k.UID, "stale")
			if !errors.As(err, &re) || re.Case != skill.RefusedStale {
				t.Errorf("ApproveTx(stale) = %v, want a stale_digest refusal", err)
			}
			return nil // commit: the refusal's audit entry lands
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []skill.AuditEvent{skill.EventCreated, skill.EventApprovalRefusedStale}
		if got := events(t, b, k.UID); !slices.Equal(got, want) {
			t.Errorf("audit = %q, want %q", got, want)
		}
	})
}
