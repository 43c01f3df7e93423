package adr228_test

import (
	"context"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L1.1, L1.2: the invocation survives the queue codec: a queued run started
// with it is worked at pickup and holds the process.
func TestL1_1_L1_2_InvocationSurvivesTheQueueCodec(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("ok"))
		erika := e.As(wt.Erika)
		st := invoke(t, erika, 1, map[string]any{"queued": true})
		id := st["uuid"].(string)
		if err := e.App.Runtime.RunQueued(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		got := erika.Must("GET", "/api/runs/"+id, nil, 200).Map(t)
		if got["status"] != "completed" || got["processSkill"] != "seo" || got["holdsProcess"] != true {
			t.Fatalf("queued process run = %v", got)
		}
		l := lineage(t, erika, id)
		if l == nil || l["pin"] == nil || l["origin"] != id {
			t.Fatalf("lineage = %v", l)
		}
	})
}

// L1.3: a stored value that cannot be decoded refuses the run; it never runs as an ordinary turn.
func TestL1_3_UndecodableStoredRequestRefusesTheRun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		erika := e.As(wt.Erika)
		id := invoke(t, erika, 1, map[string]any{"queued": true})["uuid"].(string)
		exec(t, db, `UPDATE runs SET request = ? WHERE uuid = ?`,
			`{"v":1,"initiator":2,"request":{"configuration":1,"messages":[{"role":"user","content":"x"}],"invocation":{"skill":"twelve"}}}`, id)
		if err := e.App.Runtime.RunQueued(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		got := erika.Must("GET", "/api/runs/"+id, nil, 200).Map(t)
		if got["status"] != "failed" || got["errorClass"] != "corrupt_request" {
			t.Fatalf("run = %v", got)
		}
		if n := len(e.LLM.Requests()); n != 0 {
			t.Errorf("the model was called %d times", n)
		}
	})
}
