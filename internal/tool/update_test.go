package tool_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	"waymark/internal/tool"
)

// A description of 151 characters (161 bytes), inside the recommended 140..160.
var newDescription = strings.Repeat("Frische Wörter ", 9) + "für Ihre Seite!!"

func TestUpdatePageMetadataWritesAndRecordsOneToolWriteEvent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		args := fmt.Sprintf(`{"page":%d,"fields":{"description":%q,"seoTitle":"Home of fresh words"}}`, pageHome, newDescription)
		res := b.execute(t, "update_page_metadata", erika, args)
		if res.IsError {
			t.Fatalf("update_page_metadata = %s", asJSON(t, res.Content))
		}
		want := `{"completeness":"complete","hookFailedAfterWrite":false,"unchanged":[],` +
			`"written":{"fields":["description","seoTitle"],"table":"pages","uid":1}}`
		if got := asJSON(t, res.Content); got != want {
			t.Errorf("result = %s\nwant %s", got, want)
		}
		wantStep := tool.WriteStep{Table: "pages", UID: pageHome, Fields: []string{"description", "seoTitle"}, Completeness: tool.Complete}
		if res.Write == nil || asJSON(t, *res.Write) != asJSON(t, wantStep) || !res.Write.Closes() {
			t.Errorf("Write = %+v, want %+v", res.Write, wantStep)
		}

		rec := record(t, db, "pages", pageHome)
		if rec.Fields["description"] != newDescription || rec.Fields["seoTitle"] != "Home of fresh words" || rec.Fields["title"] != "Home" {
			t.Errorf("stored fields = %v", rec.Fields)
		}
		hist, err := content.History(context.Background(), db, "pages", pageHome)
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != 2 || hist[0].Field != "description" || hist[0].Old != "Old description" ||
			hist[0].New != newDescription || hist[0].User != erika || hist[0].Run != "run-1" {
			t.Errorf("history = %+v, want description and seoTitle by erika in run-1", hist)
		}

		if len(*b.events) != 1 {
			t.Fatalf("events = %+v, want one tool_write", *b.events)
		}
		ev := (*b.events)[0]
		wantPayload := `{"table":"pages","uid":1,"fields":["description","seoTitle"],"completeness":"complete","hookFailedAfterWrite":false}`
		if ev.Kind != tool.EventToolWrite || ev.Payload != wantPayload {
			t.Errorf("event = %s %s, want tool_write %s", ev.Kind, ev.Payload, wantPayload)
		}
		for _, value := range []string{"Frische Wörter", "Home of fresh words", "Old description"} {
			if strings.Contains(ev.Payload, value) {
				t.Errorf("tool_write payload %s contains the value %q", ev.Payload, value)
			}
		}
	})
}

func TestUpdatePageMetadataDeniedChangesNothingAndEmitsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		cases := []struct {
			name string
			user int64
			page int64
			want string
		}{
			{"excluded field without grant", anna, pageHome, "permission denied: field pages.description may not be edited"},
			{"table not modifiable", rudi, pageHome, "permission denied: table pages may not be modified"},
			{"page not showable", erika, pageSecret, "page not found"},
			{"missing page", erika, pageMissing, "page not found"},
		}
		for _, c := range cases {
			args := fmt.Sprintf(`{"page":%d,"fields":{"description":"changed"}}`, c.page)
			res := b.execute(t, "update_page_metadata", c.user, args)
			if got := errorText(t, res); got != c.want {
				t.Errorf("%s: error = %q, want %q", c.name, got, c.want)
			}
			if res.Write != nil {
				t.Errorf("%s: Write = %+v, want nil", c.name, res.Write)
			}
		}
		if home := record(t, db, "pages", pageHome); home.Fields["description"] != "Old description" {
			t.Errorf("Home description = %q after denied writes", home.Fields["description"])
		}
		if secret := record(t, db, "pages", pageSecret); secret.Fields["description"] != "hidden" {
			t.Errorf("Secret description = %q after denied writes", secret.Fields["description"])
		}
		for _, p := range []int64{pageHome, pageSecret} {
			if hist, _ := content.History(context.Background(), db, "pages", p); len(hist) != 0 {
				t.Errorf("history of page %d = %+v, want none", p, hist)
			}
		}
		if len(*b.events) != 0 {
			t.Errorf("events = %+v, want none", *b.events)
		}
	})
}

func TestPreviewShowsLabelsCurrentProposedAndMeasure(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		if len(newDescription) != 161 {
			t.Fatalf("fixture: description has %d bytes, want 161 so that bytes and characters differ", len(newDescription))
		}
		args := fmt.Sprintf(`{"page":%d,"fields":{"keywords":"fresh, words","description":%q}}`, pageHome, newDescription)
		labels := map[string][2]string{"en": {"Description", "Keywords"}, "de": {"Beschreibung", "Stichworte"}}
		for lang, want := range labels {
			p, err := b.reg.Preview(ctx, "update_page_metadata", b.call(t, erika, args), lang)
			if err != nil {
				t.Fatalf("Preview(%s): %v", lang, err)
			}
			if len(p.Items) != 2 {
				t.Fatalf("Preview(%s) items = %+v, want 2", lang, p.Items)
			}
			d, k := p.Items[0], p.Items[1]
			if d.Field != "description" || d.Label != want[0] || d.Current != "Old description" || d.Proposed != newDescription {
				t.Errorf("Preview(%s) description item = %+v", lang, d)
			}
			if d.Measure == nil || *d.Measure != (tool.Measure{Count: 151, Min: 140, Max: 160}) {
				t.Errorf("Preview(%s) description measure = %+v, want 151 in 140..160", lang, d.Measure)
			}
			if k.Field != "keywords" || k.Label != want[1] || k.Current != "" || k.Proposed != "fresh, words" || k.Measure != nil {
				t.Errorf("Preview(%s) keywords item = %+v, want no measure", lang, k)
			}
			wantTarget := tool.Target{Table: "pages", UID: pageHome, Fields: []string{"description", "keywords"}}
			if asJSON(t, p.Target) != asJSON(t, wantTarget) {
				t.Errorf("Preview(%s) target = %+v, want %+v", lang, p.Target, wantTarget)
			}
		}
		if tg, ok := b.reg.Target("update_page_metadata", []byte(args)); !ok || !slices.Equal(tg.Fields, []string{"description", "keywords"}) {
			t.Errorf("Target = %+v, %v", tg, ok)
		}
		if _, ok := b.reg.Target("read_page", []byte(`{"page":1}`)); ok {
			t.Errorf("Target(read_page) is ok, want false for a read tool")
		}
		if record(t, db, "pages", pageHome).Fields["description"] != "Old description" || len(*b.events) != 0 {
			t.Errorf("a preview wrote or emitted something")
		}

		for name, bad := range map[string]string{
			"forbidden page": fmt.Sprintf(`{"page":%d,"fields":{"description":"x"}}`, pageSecret),
			"missing page":   fmt.Sprintf(`{"page":%d,"fields":{"description":"x"}}`, pageMissing),
		} {
			_, err := b.reg.Preview(ctx, "update_page_metadata", b.call(t, erika, bad), "en")
			var re *tool.ResultError
			if !errors.As(err, &re) || re.Message != "page not found" {
				t.Errorf("Preview(%s) = %v, want ResultError page not found", name, err)
			}
		}
		_, err := b.reg.Preview(ctx, "update_page_metadata", b.call(t, erika, `{"page":1}`), "en")
		if res, ok := tool.AsResult(err); !ok || !strings.Contains(errorText(t, res), "fields: missing required property") {
			t.Errorf("Preview(bad args) = %v, want a ResultError naming fields", err)
		}
	})
}

func TestUpdateContentWritesHeaderWithPreviewAndEvent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		args := fmt.Sprintf(`{"uid":%d,"fields":{"header":"Welcome to our home"}}`, contentDefault)
		p, err := b.reg.Preview(ctx, "update_content", b.call(t, erika, args), "de")
		if err != nil {
			t.Fatal(err)
		}
		wantItem := tool.PreviewItem{Field: "header", Label: "Überschrift", Current: "Welcome", Proposed: "Welcome to our home",
			Measure: &tool.Measure{Count: 19, Min: 10, Max: 70}}
		if len(p.Items) != 1 || asJSON(t, p.Items[0]) != asJSON(t, wantItem) || p.Heading != "Inhaltselement: Welcome" {
			t.Errorf("Preview = %s, want heading Inhaltselement: Welcome and item %s", asJSON(t, p), asJSON(t, wantItem))
		}

		res := b.execute(t, "update_content", erika, args)
		if res.IsError || res.Write == nil || res.Write.Table != "tt_content" || res.Write.UID != contentDefault {
			t.Fatalf("update_content = %s, write %+v", asJSON(t, res.Content), res.Write)
		}
		if got := record(t, db, "tt_content", contentDefault).Fields; got["header"] != "Welcome to our home" || got["bodytext"] != "Hello" {
			t.Errorf("stored fields = %v", got)
		}
		if len(*b.events) != 1 || strings.Contains((*b.events)[0].Payload, "Welcome") ||
			(*b.events)[0].Payload != `{"table":"tt_content","uid":100,"fields":["header"],"completeness":"complete","hookFailedAfterWrite":false}` {
			t.Errorf("events = %+v, want one tool_write without values", *b.events)
		}

		// Writing the same value again is complete, lists the field as unchanged and adds no history.
		res = b.execute(t, "update_content", erika, args)
		if out := decode(t, res.Content); res.IsError || asJSON(t, out["unchanged"]) != `["header"]` {
			t.Errorf("repeated update_content = %s, want header unchanged", asJSON(t, res.Content))
		}
		if hist, _ := content.History(ctx, db, "tt_content", contentDefault); len(hist) != 1 {
			t.Errorf("history = %+v, want one change", hist)
		}

		// Content on a page the user may not show, and content for a user without tt_content, answer alike.
		for name, c := range map[string]struct {
			user int64
			uid  int64
		}{"forbidden page": {erika, contentOnSecret}, "no tt_content": {rudi, contentDefault}, "missing": {erika, 4242}} {
			res := b.execute(t, "update_content", c.user, fmt.Sprintf(`{"uid":%d,"fields":{"header":"Leaked header"}}`, c.uid))
			if got := errorText(t, res); got != "record not found" {
				t.Errorf("update_content %s = %q, want record not found", name, got)
			}
		}
		if got := record(t, db, "tt_content", contentOnSecret).Fields["header"]; got != "Classified" {
			t.Errorf("secret header = %q after a refused write", got)
		}
		if len(*b.events) != 2 {
			t.Errorf("events = %d, want 2 (the two successful writes)", len(*b.events))
		}
	})
}

func TestPartialWriteStepIsRecordedAsPartial(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		def := tool.Def{Name: "send_twice", Schema: []byte(`{"type":"object"}`), Effect: tool.EffectNonIdempotentWrite, DefaultEnabled: true}
		err := b.reg.Register(tool.NewFuncTool(def, func(_ context.Context, call tool.Call) (tool.Result, error) {
			step, err := tool.EmitWrite(call, tool.WriteStep{Table: "tt_content", UID: contentDefault,
				Fields: []string{"header", "bodytext"}, Completeness: tool.Partial, HookFailedAfterWrite: true})
			return tool.Result{Content: map[string]any{"completeness": step.Completeness}, Write: step}, err
		}))
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := b.reg.Def("send_twice"); !d.ApprovalBound {
			t.Errorf("non_idempotent_write tool is not approval-bound")
		}
		res := b.execute(t, "send_twice", erika, `{}`)
		if res.Write == nil || res.Write.Completeness != tool.Partial || !res.Write.HookFailedAfterWrite || res.Write.Closes() {
			t.Errorf("Write = %+v, want partial with hook failure, not closing", res.Write)
		}
		want := `{"table":"tt_content","uid":100,"fields":["header","bodytext"],"completeness":"partial","hookFailedAfterWrite":true}`
		if len(*b.events) != 1 || (*b.events)[0].Payload != want {
			t.Errorf("events = %+v, want %s", *b.events, want)
		}
	})
}

// A write released with a preview writes only while the record still shows
// that preview (in the language it was shown in); otherwise it is
// ErrPreviewChanged and changes nothing, emits nothing.
func TestReleasedWriteRefusesWhenItsPreviewNoLongerHolds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		args := fmt.Sprintf(`{"page":%d,"fields":{"description":%q}}`, pageHome, newDescription)
		shown, err := b.reg.Preview(ctx, "update_page_metadata", b.call(t, erika, args), "de")
		if err != nil {
			t.Fatal(err)
		}
		// Shown in German, compared in English: the labels differ.
		call := b.call(t, erika, args)
		call.Released = &tool.Released{Preview: shown, Lang: "en"}
		if _, err := b.reg.Execute(ctx, "update_page_metadata", call); !errors.Is(err, tool.ErrPreviewChanged) {
			t.Fatalf("released in another language: Execute = %v, want ErrPreviewChanged", err)
		}
		// The record changed after the preview was shown.
		exec(t, db, `UPDATE records SET fields = ? WHERE tbl = 'pages' AND uid = ?`,
			`{"title":"Home","description":"Edited meanwhile","seoTitle":""}`, pageHome)
		call.Released = &tool.Released{Preview: shown, Lang: "de"}
		if _, err := b.reg.Execute(ctx, "update_page_metadata", call); !errors.Is(err, tool.ErrPreviewChanged) {
			t.Fatalf("record changed: Execute = %v, want ErrPreviewChanged", err)
		}
		if d := record(t, db, "pages", pageHome).Fields["description"]; d != "Edited meanwhile" || len(*b.events) != 0 {
			t.Fatalf("after refusals: description %q, events %+v; want unchanged, none", d, *b.events)
		}
		// Released with the preview as it is now: written.
		now, err := b.reg.Preview(ctx, "update_page_metadata", b.call(t, erika, args), "de")
		if err != nil {
			t.Fatal(err)
		}
		call.Released = &tool.Released{Preview: now, Lang: "de"}
		if res, err := b.reg.Execute(ctx, "update_page_metadata", call); err != nil || res.IsError {
			t.Fatalf("Execute = %+v, %v", res, err)
		}
		if d := record(t, db, "pages", pageHome).Fields["description"]; d != newDescription {
			t.Fatalf("description = %q, want the released proposal", d)
		}
	})
}
