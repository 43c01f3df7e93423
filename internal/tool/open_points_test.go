package tool_test

import (
	"fmt"
	"slices"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

const lena = int64(10) // like anna, the description granted, language 0 only

// seedOpenPoints stores open points on Home (and one on Secret), oldest first.
func seedOpenPoints(t *testing.T, db *store.DB) {
	t.Helper()
	exec(t, db, `INSERT INTO be_groups (uid, title, non_exclude_fields, languages, subgroups) VALUES (6, 'English', '["pages:description"]', '[0]', '[4]')`)
	exec(t, db, `INSERT INTO be_users (uid, username, group_uids) VALUES (?, 'lena', '[6]')`, lena)
	q := `INSERT INTO open_points (skill_uid, page_uid, tbl, uid, field, language, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`
	for i, p := range []struct {
		skill, page int64
		table       string
		uid         int64
		field       string
		language    int64
	}{
		{1, pageHome, "pages", pageHome, "description", 0}, // excluded
		{1, pageHome, "pages", pageHome, "title", 0},
		{2, pageHome, "tt_content", contentDefault, "bodytext", 0},
		{1, pageHome, "tt_content", contentGerman, "header", 1},
		{1, pageHome, "tt_content", 4242, "header", 0}, // the record is gone
		{1, pageHome, "tt_content", contentAll, "", -1},
		{1, pageSecret, "tt_content", contentOnSecret, "header", 0},
	} {
		exec(t, db, q, p.skill, p.page, p.table, p.uid, p.field, p.language, int64(1000+i))
	}
}

// listed renders a list_open_points result as "table:uid field skill" lines.
func listed(t *testing.T, out map[string]any) []string {
	t.Helper()
	got := []string{}
	for _, p := range out["openPoints"].([]any) {
		m := p.(map[string]any)
		if len(m) != 4 {
			t.Errorf("open point %v has keys beyond table, uid, field, skill", m)
		}
		got = append(got, fmt.Sprintf("%s:%.0f %s %.0f", m["table"], m["uid"], m["field"], m["skill"]))
	}
	return got
}

func TestListOpenPointsListsWhatTheUserMaySee(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		seedOpenPoints(t, db)
		cases := map[string]struct {
			user int64
			args string
			want []string
		}{
			"editor": {erika, `{"page":1}`, []string{"tt_content:101  1", "tt_content:102 header 1", "tt_content:100 bodytext 2",
				"pages:1 title 1", "pages:1 description 1"}},
			"without excluded fields": {anna, `{"page":1}`, []string{"tt_content:101  1", "tt_content:102 header 1",
				"tt_content:100 bodytext 2", "pages:1 title 1"}},
			"without tt_content":   {rudi, `{"page":1}`, []string{"pages:1 title 1"}},
			"language 0 only":      {lena, `{"page":1}`, []string{"tt_content:101  1", "tt_content:100 bodytext 2", "pages:1 title 1", "pages:1 description 1"}},
			"one skill":            {erika, `{"page":1,"skill":2}`, []string{"tt_content:100 bodytext 2"}},
			"a page without point": {erika, fmt.Sprintf(`{"page":%d}`, pageHomeGerman), []string{}},
		}
		for name, c := range cases {
			res := b.execute(t, "list_open_points", c.user, c.args)
			if res.IsError {
				t.Fatalf("list_open_points(%s) = %s", name, asJSON(t, res.Content))
			}
			out := decode(t, res.Content)
			if got := listed(t, out); !slices.Equal(got, c.want) {
				t.Errorf("list_open_points(%s) = %q, want %q", name, got, c.want)
			}
		}
		res := b.execute(t, "list_open_points", erika, `{"page":1,"skill":2}`)
		if got, want := asJSON(t, res.Content), `{"openPoints":[{"table":"tt_content","uid":100,"field":"bodytext","skill":2}],"page":1}`; got != want {
			t.Errorf("list_open_points = %s, want %s", got, want)
		}
	})
}

func TestListOpenPointsAnswersForbiddenAndMissingAlike(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		seedOpenPoints(t, db)
		for name, c := range map[string]struct {
			user int64
			args string
		}{
			"forbidden page": {erika, fmt.Sprintf(`{"page":%d}`, pageSecret)},
			"missing page":   {erika, fmt.Sprintf(`{"page":%d}`, pageMissing)},
			"content uid":    {erika, fmt.Sprintf(`{"page":%d}`, contentDefault)},
			"missing user":   {4711, `{"page":1}`},
		} {
			res := b.execute(t, "list_open_points", c.user, c.args)
			if got := errorText(t, res); got != "page not found" {
				t.Errorf("list_open_points(%s) error = %q, want page not found", name, got)
			}
		}
	})
}
