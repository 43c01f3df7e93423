package adr228_test

import (
	"context"
	"testing"

	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L5.1: the runtime sets the pin: a continuation carries its predecessor's
// pin even after a newer version of the skill was approved — a newer
// approval does not replace a pin.
func TestL5_1_TheRuntimeDerivesThePinNotTheLiveRecord(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("one"), answer("two"))
		erika := e.As(wt.Erika)
		first := startSEO(t, erika, 1)
		l := lineage(t, erika, first.UUID)
		if l == nil || l.Pin == nil {
			t.Fatalf("the start's lineage = %+v, want a pin", l)
		}
		pin := l.Pin
		k, _ := e.App.Skills.Get(ctx, seoSkill)
		if pin.Digest != k.Digest() {
			t.Fatalf("the start's pin %+v is not the approved current digest %s", pin, k.Digest())
		}
		v := k.Version
		v.Body = "PROCESS-SEO-V2"
		edited, err := e.App.Skills.Update(ctx, skill.UpdateParams{UID: seoSkill, Version: v, Actor: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.App.Skills.Approve(ctx, 1, seoSkill, edited.Digest()); err != nil {
			t.Fatal(err)
		}
		next := continued(t, erika, 1, first.UUID, false)
		if nl := lineage(t, erika, next.UUID); nl == nil || nl.Pin == nil || nl.Pin.Digest != pin.Digest {
			t.Fatalf("the continuation's lineage %+v replaced the pin %+v", nl, pin)
		}
	})
}

// L1.4, L5.3: no public entry point carries a pin: a request naming one is refused and creates nothing.
func TestL1_4_L5_3_ARequestCannotCarryAPin(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		r := e.As(wt.Erika).Do("POST", "/api/runs", map[string]any{"configuration": 1,
			"messages":   []map[string]string{{"role": "user", "content": "x"}},
			"invocation": map[string]any{"skill": seoSkill, "pin": map[string]any{"skill": 12, "source": 2, "digest": "v1:00"}}})
		if r.Status != 400 {
			t.Fatalf("a pin in the request = %d %s", r.Status, r.Body)
		}
		var n int
		_ = db.QueryRow(context.Background(), "SELECT COUNT(*) FROM runs").Scan(&n)
		if n != 0 {
			t.Errorf("%d runs created", n)
		}
	})
}
