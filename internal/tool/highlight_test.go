package tool_test

import (
	"context"
	"fmt"
	"testing"

	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	"waymark/internal/tool"
)

// Content elements on Home that are not live.
const (
	contentDeleted   = int64(110)
	contentWorkspace = int64(111)
)

// highlightSetup is setup plus a deleted and a workspace element on Home, with
// highlight_record enabled.
func highlightSetup(t *testing.T, db *store.DB) bundle {
	t.Helper()
	ctx := context.Background()
	b := setup(t, db)
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, r := range []content.Record{
			{Table: "tt_content", UID: contentDeleted, PID: pageHome, Deleted: true, Fields: map[string]string{"header": "Gone"}},
			{Table: "tt_content", UID: contentWorkspace, PID: pageHome, Workspace: 1, Fields: map[string]string{"header": "Draft"}},
		} {
			if err := content.PutTx(ctx, tx, r, 1); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("seed records: %v", err)
	}
	if err := b.reg.SetEnabled(ctx, "highlight_record", true); err != nil {
		t.Fatalf("SetEnabled: %v", err)
	}
	return b
}

// highlight runs highlight_record by user in a run on subject.
func (b bundle) highlight(t *testing.T, user int64, subject *content.Ref, table string, uid int64) tool.Result {
	t.Helper()
	call := b.call(t, user, fmt.Sprintf(`{"table":%q,"uid":%d}`, table, uid))
	call.Subject = subject
	res, err := b.reg.Execute(context.Background(), "highlight_record", call)
	if err != nil {
		t.Fatalf("highlight_record(%s:%d) error: %v", table, uid, err)
	}
	return res
}

func TestHighlightRecordShipsDisabled(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		d, _ := b.reg.Def("highlight_record")
		if d.DefaultEnabled || d.Effect != tool.EffectRead || d.Group != tool.GroupProcess || d.NeedsApproval() {
			t.Errorf("highlight_record def = %+v, want a disabled read in group process", d)
		}
		home := &content.Ref{Table: "pages", UID: pageHome}
		if got, want := errorText(t, b.highlight(t, erika, home, "pages", pageHome)), `tool "highlight_record" is disabled`; got != want {
			t.Errorf("highlight_record before enabling = %q, want %q", got, want)
		}
		if len(*b.events) != 0 {
			t.Errorf("a disabled highlight_record recorded %v", *b.events)
		}
		if err := b.reg.SetEnabled(ctx, "highlight_record", true); err != nil {
			t.Fatal(err)
		}
		if res := b.highlight(t, erika, home, "pages", pageHome); res.IsError {
			t.Errorf("highlight_record after enabling = %s, want accepted", asJSON(t, res.Content))
		}
	})
}

func TestHighlightRecordAcceptsTheSubjectAndItsElements(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := highlightSetup(t, db)
		home := &content.Ref{Table: "pages", UID: pageHome}
		homeIn1 := &content.Ref{Table: "pages", UID: pageHome, Language: 1}
		german := &content.Ref{Table: "pages", UID: pageHomeGerman, Language: 1}
		germanNoLang := &content.Ref{Table: "pages", UID: pageHomeGerman}
		element := &content.Ref{Table: "tt_content", UID: contentDefault}
		cases := []struct {
			name    string
			subject *content.Ref
			table   string
			uid     int64
		}{
			{"the page subject itself", home, "pages", pageHome},
			{"an element in the subject language", home, "tt_content", contentDefault},
			{"an all-languages element", home, "tt_content", contentAll},
			{"an element in the translated subject's language", homeIn1, "tt_content", contentGerman},
			{"an all-languages element of a translated subject", homeIn1, "tt_content", contentAll},
			{"the translation record itself", german, "pages", pageHomeGerman},
			{"an element of a translation record's default page", german, "tt_content", contentGerman},
			{"an all-languages element of a translation record", german, "tt_content", contentAll},
			{"an element of a translation record named without language", germanNoLang, "tt_content", contentGerman},
			{"the element subject itself", element, "tt_content", contentDefault},
		}
		for _, c := range cases {
			*b.events = nil
			res := b.highlight(t, erika, c.subject, c.table, c.uid)
			want := fmt.Sprintf(`{"table":%q,"uid":%d}`, c.table, c.uid)
			if got := asJSON(t, res.Content); res.IsError || got != `{"highlighted":`+want+`}` {
				t.Errorf("highlight %s = %s, want {\"highlighted\":%s}", c.name, got, want)
			}
			if len(*b.events) != 1 || (*b.events)[0].Kind != tool.EventHighlight || (*b.events)[0].Payload != want {
				t.Errorf("highlight %s recorded %v, want one highlight event %s", c.name, *b.events, want)
			}
		}
	})
}

func TestHighlightRecordRefusesOtherTargetsAlike(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := highlightSetup(t, db)
		home := &content.Ref{Table: "pages", UID: pageHome}
		german := &content.Ref{Table: "pages", UID: pageHomeGerman, Language: 1}
		element := &content.Ref{Table: "tt_content", UID: contentDefault}
		cases := []struct {
			name    string
			user    int64
			subject *content.Ref
			table   string
			uid     int64
		}{
			{"an element of another page", erika, home, "tt_content", contentOnSecret},
			{"an element in another language", erika, home, "tt_content", contentGerman},
			{"a default-language element of a translated subject", erika, german, "tt_content", contentDefault},
			{"a deleted element", erika, home, "tt_content", contentDeleted},
			{"a workspace element", erika, home, "tt_content", contentWorkspace},
			{"a missing uid", erika, home, "tt_content", 4242},
			{"another page", erika, home, "pages", pageSecret},
			{"the default page of a translation subject", erika, german, "pages", pageHome},
			{"another element of an element subject", erika, element, "tt_content", contentAll},
			{"a table outside pages and tt_content", erika, home, "be_users", erika},
			{"an element for a user who may not read tt_content", rudi, home, "tt_content", contentDefault},
		}
		want := `{"error":"` + tool.MsgNotHighlightTarget + `"}`
		for _, c := range cases {
			res := b.highlight(t, c.user, c.subject, c.table, c.uid)
			if got := asJSON(t, res.Content); !res.IsError || got != want {
				t.Errorf("highlight %s = %s, want %s", c.name, got, want)
			}
		}
		if got := errorText(t, b.highlight(t, erika, nil, "pages", pageHome)); got != tool.MsgNoSubject {
			t.Errorf("highlight without a subject = %q, want %q", got, tool.MsgNoSubject)
		}
		if len(*b.events) != 0 {
			t.Errorf("refused highlights recorded %v, want nothing", *b.events)
		}
	})
}
