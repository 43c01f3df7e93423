package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"waymark/internal/changes"
	"waymark/internal/content"
)

// handleChanges answers GET /api/changes?format=csv|json&site=&page=&from=&to=:
// every applied change the caller may see, oldest first — administrators
// every one, anyone else the changes she answered or released (her own
// work, as a conversation is its owner's). site is a root page uid (the
// changes on it and below it), page one page, from (inclusive) and to
// (exclusive) RFC 3339 times or dates. Bad input is a 400 with its code
// (bad_format, bad_time, bad_page) and nothing is read.
func (s *Server) handleChanges(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "csv" {
		return changes.ErrBadFormat.With("format: want csv or json, got %q", format)
	}
	var f changes.Filter
	var err error
	if f.From, err = changes.ParseTime("from", q.Get("from")); err != nil {
		return err
	}
	if f.To, err = changes.ParseTime("to", q.Get("to")); err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"page", &f.Page}, {"site", new(int64)}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return changes.ErrBadPage.With("%s: want a positive page uid, got %q", p.name, v)
			}
			*p.dst = n
			if p.name == "site" {
				if f.Pages, err = s.subtree(r, n); err != nil {
					return err
				}
			}
		}
	}
	a := ActorFrom(r.Context())
	if !a.IsAdmin() {
		f.Actor = a.UID
	}
	list, err := changes.List(r.Context(), s.db, f)
	if err != nil {
		return err
	}
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="changes.csv"`)
		return changes.WriteCSV(w, list)
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(map[string]any{"changes": list})
}

// subtree is root and the default-language pages below it (at most 100
// levels, 20000 pages).
func (s *Server) subtree(r *http.Request, root int64) ([]int64, error) {
	src := content.OrBuiltin(s.src)
	out, next := []int64{root}, []int64{root}
	for depth := 0; len(next) > 0 && depth < 100 && len(out) < 20000; depth++ {
		var below []int64
		for _, pid := range next {
			ps, err := src.OnPage(r.Context(), s.db, "pages", pid, content.LanguageDefault)
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				below = append(below, p.UID)
			}
		}
		out, next = append(out, below...), below
	}
	return out, nil
}
