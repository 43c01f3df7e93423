package adr022_test

import (
	"context"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// P.C1: an approved complete write made through the chat
// closes every open point on its target and fields in any conversation —
// with a process skill, a plain skill or none — and at every privacy level,
// none included; its outcome reads applied. The write's result is read from
// what the runtime returns for the decision, not from event payloads a
// privacy level may have emptied.
func TestPC1_ClosingDoesNotDependOnTheSkillOrThePrivacyLevel(t *testing.T) {
	skills := []struct {
		name  string
		skill int64
		apply string
	}{{"process skill", seo, "apply"}, {"plain skill", tone, "approve"}, {"no skill", 0, "approve"}}
	for _, privacy := range []string{"none", "metadata", "full"} {
		for _, sk := range skills {
			t.Run(sk.name+" at privacy "+privacy, func(t *testing.T) {
				storetest.Each(t, func(t *testing.T, db *store.DB) {
					ctx := context.Background()
					e := newEnv(t, db)
					for _, q := range []string{
						"UPDATE configurations SET privacy = '" + privacy + "' WHERE uid = 1",
						`INSERT INTO open_points (skill_uid, page_uid, tbl, uid, field, language, created_at)
							VALUES (12, 1, 'pages', 1, 'description', 0, 1), (12, 2, 'pages', 1, 'description', 0, 2)`,
					} {
						if _, err := db.Exec(ctx, q); err != nil {
							t.Fatal(err)
						}
					}
					e.LLM.Add(write("c1", `{"description": "applied"}`), answer("erledigt"))
					erika := e.As(wt.Erika)
					conv := said(t, e, erika, opened(t, erika, sk.skill).ID, "Los")
					if conv.Status != "awaiting_approval" {
						t.Fatalf("conv = %+v", conv)
					}
					conv = decided(t, e, erika, conv, sk.apply)
					if n := countPoints(t, db); n != 0 {
						t.Errorf("the applied write left %d open points", n)
					}
					out := conv.Outcomes
					if len(out) != 1 || out[0].Outcome != "applied" {
						t.Errorf("outcomes = %v, want one applied", out)
					}
				})
			})
		}
	}
}
