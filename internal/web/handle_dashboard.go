package web

import (
	"context"
	"net/http"
	"slices"

	"waymark/internal/openpoint"
	"waymark/internal/site"
)

type dashData struct {
	Points []pointItem
	Pages  []suggestionItem
	Recent []convItem
}

type pointItem struct {
	openpoint.Entry
	SkillName string
}

type suggestionItem struct {
	site.Suggestion
	Skill        int64 // the process with the most open points on the page, 0 for none
	LanguageName string
	OpenPoints   bool // the page has open points (else SEO gaps only)
}

// handleDashboard renders the open points the user may see (newest first,
// each a link that starts its process on its page), the pages worth
// improving and the five most recent conversations.
func (u *UI) handleDashboard(w http.ResponseWriter, r *http.Request, me *user) {
	ctx := r.Context()
	p := u.newPage(me, "dashboard", "dashboard.title")
	d := &dashData{}
	points, pages, err := u.rankedPages(ctx, me)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	d.Points, d.Pages = points, pages
	recent, err := u.sidebar(ctx, me, 0)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	if len(recent) > 5 {
		recent = recent[:5]
	}
	d.Recent = recent
	p.Dash = d
	if u.Campaigns != nil {
		// The form to start a campaign: a page's "campaign from here" link
		// fills in its root page.
		f := u.campaignForm(r, me)
		if root := r.URL.Query().Get("rootPage"); root != "" {
			f.RootPage, f.Filter = root, ""
		}
		p.Data = &campaignsData{Form: f}
	}
	u.render(w, r, "dashboard", "layout", p, http.StatusOK)
}

// dashboardPages is how many pages the dashboard suggests.
const dashboardPages = 8

// rankedPages is the one ranking of the pages worth improving, read by the
// dashboard and by the end of a tour (nextPage), so the two cannot name
// different pages: the open points the editor may see (newest first), and
// site.Suggestions ranked over them, each suggestion with the process it
// starts — the process with the most open points on the page in that
// language (on a tie, the one of the newer point), else the first process
// the editor may run.
func (u *UI) rankedPages(ctx context.Context, me *user) ([]pointItem, []suggestionItem, error) {
	points, err := u.OpenPoints.Visible(ctx, me.A.UID, openpoint.DefaultLimit)
	if err != nil {
		return nil, nil, err
	}
	names := map[int64]string{}
	var firstProcess int64 // the catalogue's first process: what "improve this page" starts without open points
	if cfg, err := u.Chat.ConfigurationFor(ctx, me.A.UID); err == nil {
		if list, err := u.Catalogue.ForActor(ctx, me.A.UID, cfg.UID); err == nil {
			for _, e := range u.localCatalogue(ctx, me, list) {
				names[e.UID] = e.Name
				if firstProcess == 0 {
					firstProcess = e.UID
				}
			}
		}
	}
	var items []pointItem
	counts := map[site.PointCount]int{}
	// skillsOn are the processes of a page's points in the order of their
	// newest point, with their counts.
	type skillCount struct{ skill, n int64 }
	skillsOn := map[site.PointCount][]skillCount{}
	for _, pt := range points {
		items = append(items, pointItem{Entry: pt, SkillName: names[pt.Skill]})
		k := site.PointCount{Page: pt.Page, Language: pt.Language}
		counts[k]++
		if i := slices.IndexFunc(skillsOn[k], func(c skillCount) bool { return c.skill == pt.Skill }); i >= 0 {
			skillsOn[k][i].n++
		} else {
			skillsOn[k] = append(skillsOn[k], skillCount{pt.Skill, 1})
		}
	}
	sugg, err := u.Site.Suggestions(ctx, me.A, counts, dashboardPages)
	if err != nil {
		return nil, nil, err
	}
	var pages []suggestionItem
	for _, sg := range sugg {
		it := suggestionItem{Suggestion: sg}
		it.LanguageName, _ = u.languageOf(ctx, me, sg.Language)
		var best int64
		for _, c := range skillsOn[site.PointCount{Page: sg.Page, Language: sg.Language}] {
			if c.n > best && names[c.skill] != "" {
				it.Skill, best = c.skill, c.n
			}
		}
		it.OpenPoints = slices.ContainsFunc(sg.Reasons, func(g site.Gap) bool { return g.Kind == "openPoints" })
		if it.Skill == 0 {
			// Every suggestion starts a tour: a page with no open points
			// gets the first process the editor may run.
			it.Skill = firstProcess
		}
		pages = append(pages, it)
	}
	return items, pages, nil
}
