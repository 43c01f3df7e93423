package tool_test

import (
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	"waymark/internal/tool"
)

func TestSetProgressRecordsOneEventWithoutTheLabel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		res := b.execute(t, "set_progress", erika, `{"current":2,"total":3,"label":"Meta description of Home"}`)
		if got, want := asJSON(t, res.Content), `{"progress":{"current":2,"total":3,"completed":false,"label":"Meta description of Home"}}`; res.IsError || got != want {
			t.Errorf("set_progress = %s (error %v), want %s", got, res.IsError, want)
		}
		if len(*b.events) != 1 {
			t.Fatalf("events = %v, want exactly one", *b.events)
		}
		ev := (*b.events)[0]
		if ev.Kind != tool.EventProgress || ev.Payload != `{"current":2,"total":3,"completed":false}` {
			t.Errorf("event = %+v, want progress {current 2, total 3, completed false} without the label", ev)
		}

		res = b.execute(t, "set_progress", erika, `{"current":3,"total":3,"completed":true}`)
		if got, want := asJSON(t, res.Content), `{"progress":{"current":3,"total":3,"completed":true}}`; got != want {
			t.Errorf("set_progress completed = %s, want %s", got, want)
		}
		if len(*b.events) != 2 || (*b.events)[1].Payload != `{"current":3,"total":3,"completed":true}` {
			t.Errorf("events after completion = %v, want a second progress event marked completed", *b.events)
		}
	})
}

func TestSetProgressRefusesBadArgumentsAndRecordsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		for args, want := range map[string]string{
			`{"current":4,"total":3}`:                   tool.MsgProgressExceeds,
			`{"current":0,"total":0}`:                   "total",
			`{"current":-1,"total":3}`:                  "current",
			`{"current":1,"total":3,"percent":33}`:      "percent: unknown property",
			`{"total":3}`:                               "current: missing required property",
			`{"current":1,"total":3,"completed":"yes"}`: "completed",
			`{"current":1,"total":3,"label":"` + strings.Repeat("x", 121) + `"}`: "label",
		} {
			got := errorText(t, b.execute(t, "set_progress", erika, args))
			if !strings.Contains(got, want) {
				t.Errorf("set_progress(%.60s) = %q, want an error containing %q", args, got, want)
			}
		}
		if len(*b.events) != 0 {
			t.Errorf("refused calls recorded events %v, want none", *b.events)
		}
		ok := b.execute(t, "set_progress", erika, `{"current":0,"total":1,"label":"`+strings.Repeat("ü", 120)+`"}`)
		if ok.IsError {
			t.Errorf("set_progress with a 120-character label = %s, want accepted", asJSON(t, ok.Content))
		}
	})
}

func TestSetProgressIsAnEnabledProcessRead(t *testing.T) {
	t.Parallel()
	reg := tool.NewRegistry(nil, nil)
	if err := tool.RegisterBuiltins(reg, nil, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	d, _ := reg.Def("set_progress")
	if d.Effect != tool.EffectRead || d.Group != tool.GroupProcess || !d.DefaultEnabled || d.NeedsApproval() || d.Input {
		t.Errorf("set_progress def = %+v, want an enabled read in group process without approval", d)
	}
}
