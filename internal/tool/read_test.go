package tool_test

import (
	"fmt"
	"slices"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// contentUIDs lists the uids of a read_page result's content elements; nil when the key is absent.
func contentUIDs(t *testing.T, out map[string]any) []int64 {
	t.Helper()
	list, ok := out["content"].([]any)
	if !ok {
		return nil
	}
	uids := []int64{}
	for _, c := range list {
		uids = append(uids, int64(c.(map[string]any)["uid"].(float64)))
	}
	return uids
}

func TestReadPageShowsFieldsAndContentOfTheLanguage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		cases := []struct {
			args        string
			wantContent []int64
			translation int64 // 0: none
		}{
			{fmt.Sprintf(`{"page":%d}`, pageHome), []int64{contentDefault, contentAll}, 0},
			{fmt.Sprintf(`{"page":%d,"language":0}`, pageHome), []int64{contentDefault, contentAll}, 0},
			{fmt.Sprintf(`{"page":%d,"language":1}`, pageHome), []int64{contentAll, contentGerman}, pageHomeGerman},
			{fmt.Sprintf(`{"page":%d}`, pageHomeGerman), []int64{contentAll, contentGerman}, pageHomeGerman},
			{fmt.Sprintf(`{"page":%d,"language":2}`, pageHome), []int64{contentAll}, 0},
		}
		for _, c := range cases {
			res := b.execute(t, "read_page", erika, c.args)
			if res.IsError {
				t.Fatalf("read_page(%s) = %s", c.args, asJSON(t, res.Content))
			}
			out := decode(t, res.Content)
			page := out["page"].(map[string]any)
			fields := page["fields"].(map[string]any)
			if page["uid"].(float64) != float64(pageHome) || fields["title"] != "Home" || fields["description"] != "Old description" {
				t.Errorf("read_page(%s).page = %v, want Home with its fields", c.args, page)
			}
			if got := contentUIDs(t, out); !slices.Equal(got, c.wantContent) {
				t.Errorf("read_page(%s) content = %v, want %v", c.args, got, c.wantContent)
			}
			tr, has := out["translation"].(map[string]any)
			switch {
			case c.translation == 0 && has:
				t.Errorf("read_page(%s) has translation %v, want none", c.args, tr)
			case c.translation != 0 && (!has || tr["uid"].(float64) != float64(c.translation)):
				t.Errorf("read_page(%s) translation = %v, want uid %d", c.args, tr, c.translation)
			}
		}
	})
}

func TestReadPageListsContentOnlyForUsersWhoMayReadIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		res := b.execute(t, "read_page", rudi, fmt.Sprintf(`{"page":%d}`, pageHome))
		out := decode(t, res.Content)
		if res.IsError || out["page"] == nil {
			t.Fatalf("read_page by rudi = %s, want the page", asJSON(t, res.Content))
		}
		if _, listed := out["content"]; listed {
			t.Errorf("read_page by a user without tt_content lists content: %v", out["content"])
		}
	})
}

func TestReadPageAnswersForbiddenAndMissingAlike(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		forbidden := b.execute(t, "read_page", erika, fmt.Sprintf(`{"page":%d}`, pageSecret))
		missing := b.execute(t, "read_page", erika, fmt.Sprintf(`{"page":%d}`, pageMissing))
		notAPage := b.execute(t, "read_page", erika, fmt.Sprintf(`{"page":%d}`, contentDefault))
		want := `{"error":"page not found"}`
		for name, res := range map[string]any{"forbidden": forbidden.Content, "missing": missing.Content, "content uid": notAPage.Content} {
			if got := asJSON(t, res); got != want {
				t.Errorf("read_page(%s) = %s, want %s", name, got, want)
			}
		}
		if !forbidden.IsError || !missing.IsError {
			t.Errorf("IsError forbidden=%v missing=%v, want both true", forbidden.IsError, missing.IsError)
		}
	})
}

func TestReadRecordAnswersForbiddenAndMissingAlike(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		res := b.execute(t, "read_record", erika, fmt.Sprintf(`{"table":"tt_content","uid":%d}`, contentDefault))
		out := decode(t, res.Content)
		if res.IsError || out["fields"].(map[string]any)["header"] != "Welcome" || out["table"] != "tt_content" {
			t.Fatalf("read_record(100) = %s, want the Welcome element", asJSON(t, res.Content))
		}
		want := `{"error":"record not found"}`
		for name, c := range map[string]struct {
			user int64
			args string
		}{
			"on a forbidden page":   {erika, fmt.Sprintf(`{"table":"tt_content","uid":%d}`, contentOnSecret)},
			"missing":               {erika, `{"table":"tt_content","uid":4242}`},
			"unknown table":         {erika, `{"table":"be_users","uid":7}`},
			"table the user lacks":  {rudi, fmt.Sprintf(`{"table":"tt_content","uid":%d}`, contentDefault)},
			"forbidden page record": {erika, fmt.Sprintf(`{"table":"pages","uid":%d}`, pageSecret)},
		} {
			if got := asJSON(t, b.execute(t, "read_record", c.user, c.args).Content); got != want {
				t.Errorf("read_record %s = %s, want %s", name, got, want)
			}
		}
	})
}
