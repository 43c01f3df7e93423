package admin_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

func run(t *testing.T, e *wt.Env, token string, cfg int, reply llmtest.Reply) string {
	t.Helper()
	e.LLM.Add(reply)
	st := wt.Decode[wt.RunStatus](t, e.As(token).Must("POST", "/api/runs", map[string]any{"configuration": cfg,
		"messages": []map[string]string{{"role": "user", "content": "Hello"}}}, http.StatusCreated))
	return st.UUID
}

// uuids lists the uuids of GET /api/admin/runs?query and its next cursor.
func uuids(t *testing.T, c *wt.Client, query url.Values) ([]string, string) {
	t.Helper()
	page := wt.Decode[wt.RunPage](t, c.Must("GET", "/api/admin/runs?"+query.Encode(), nil, http.StatusOK))
	var out []string
	for _, r := range page.Runs {
		out = append(out, r.UUID)
	}
	return out, page.Next
}

func TestAdministratorListsRunsFilteredNewestFirst(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		r1 := run(t, e, wt.Erika, 1, llmtest.Reply{Content: "one"})
		r2 := run(t, e, wt.Paula, 1, llmtest.Reply{Content: "two"})
		r3 := run(t, e, wt.Erika, 2, llmtest.Reply{Status: 400, ErrorMessage: "bad request"})
		r4 := run(t, e, wt.Erika, 1, llmtest.Reply{Content: "four"})

		all, next := uuids(t, admin, nil)
		if want := []string{r4, r3, r2, r1}; !equal(all, want) || next != "" {
			t.Errorf("all runs = %v next %q, want %v newest first", all, next, want)
		}
		first := wt.Decode[wt.RunPage](t, admin.Must("GET", "/api/admin/runs", nil, 200)).Runs[1]
		if first.Status != "failed" || first.Configuration != 2 || first.Initiator != 2 {
			t.Errorf("the failed run reads %+v, want the RunStatus summary", first)
		}
		for _, tc := range []struct {
			query url.Values
			want  []string
		}{
			{url.Values{"status": {"completed"}}, []string{r4, r2, r1}},
			{url.Values{"status": {"failed"}}, []string{r3}},
			{url.Values{"configuration": {"2"}}, []string{r3}},
			{url.Values{"initiator": {"3"}}, []string{r2}},
			{url.Values{"initiator": {"2"}, "status": {"completed"}}, []string{r4, r1}},
			{url.Values{"from": {time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}}, []string{r4, r3, r2, r1}},
			{url.Values{"from": {time.Now().Add(24 * time.Hour).UTC().Format("2006-01-02")}}, nil},
			{url.Values{"to": {time.Now().Add(-24 * time.Hour).UTC().Format("2006-01-02")}}, nil},
			{url.Values{"to": {time.Now().UTC().Format("2006-01-02")}}, []string{r4, r3, r2, r1}},
		} {
			if got, _ := uuids(t, admin, tc.query); !equal(got, tc.want) {
				t.Errorf("runs?%s = %v, want %v", tc.query.Encode(), got, tc.want)
			}
		}

		// Cursor paging, newest first, ends with an empty cursor.
		var paged []string
		q := url.Values{"limit": {"2"}}
		for i := 0; i < 5; i++ {
			page, next := uuids(t, admin, q)
			paged = append(paged, page...)
			if next == "" {
				break
			}
			q.Set("after", next)
		}
		if !equal(paged, all) {
			t.Errorf("paged = %v, want %v", paged, all)
		}
	})
}

func TestRunListBadFiltersAreRefusedNamingTheParameter(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		admin := e.As(wt.Admin)
		for _, tc := range []struct{ query, param string }{
			{"status=done", "status"},
			{"configuration=x", "configuration"},
			{"initiator=-1", "initiator"},
			{"from=yesterday", "from"},
			{"to=2026-13-01", "to"},
			{"limit=0", "limit"},
			{"limit=500", "limit"},
			{"after=nonsense", "after"},
		} {
			refused(t, admin.Do("GET", "/api/admin/runs?"+tc.query, nil), 400, tc.param, "runs?"+tc.query)
		}
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
