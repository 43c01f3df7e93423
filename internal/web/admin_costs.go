package web

import (
	"errors"
	"net/http"
	"strconv"

	"waymark/internal/cost"
	"waymark/internal/fault"
)

// The costs screen: what the model calls of a month cost, per configuration
// (cost.Reader.Month, as GET /api/costs), for administrators.

type costsData struct {
	Month  string // YYYY-MM shown
	Report cost.Report
	Lines  []costLine
	Total  costLine
	Error  string
}

type costLine struct {
	Name, Model, Calls, In, Out, Cost string
}

func (u *UI) handleCosts(w http.ResponseWriter, r *http.Request, me *user) {
	d := &costsData{}
	status := http.StatusOK
	from, err := cost.ParseMonth(r.URL.Query().Get("month"), u.API.Now())
	var fe *fault.Error
	if errors.As(err, &fe) {
		d.Error, status = me.T.Get("admin.costs.badMonth", r.URL.Query().Get("month")), http.StatusBadRequest
		from, _ = cost.ParseMonth("", u.API.Now())
	}
	d.Month = from.Format("2006-01")
	rep, err := cost.New(u.DB).Month(r.Context(), from)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	d.Report = rep
	sep := ","
	if me.T.Lang() == "de" {
		sep = "."
	}
	price := func(c float64) string {
		s := strconv.FormatFloat(c, 'f', 4, 64)
		if sep == "." {
			s = replaceDot(s)
		}
		return s
	}
	for _, l := range rep.Configuration {
		name := l.Name
		if name == "" {
			name = cmpOrStr(l.Identifier, "#"+strconv.FormatInt(l.Configuration, 10))
		}
		d.Lines = append(d.Lines, costLine{Name: name, Model: l.Model, Calls: group(l.Calls, sep),
			In: group(l.PromptTokens, sep), Out: group(l.CompletionTokens, sep), Cost: price(l.Cost)})
	}
	d.Total = costLine{In: group(rep.Total.PromptTokens, sep), Out: group(rep.Total.CompletionTokens, sep), Cost: price(rep.Total.Cost)}
	p := u.newPage(me, "admin", "admin.costs.heading")
	p.Data = d
	u.render(w, r, "admin_costs", "layout", p, status)
}

func replaceDot(s string) string {
	for i := range s {
		if s[i] == '.' {
			return s[:i] + "," + s[i+1:]
		}
	}
	return s
}

func cmpOrStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
