package web

import (
	"net/http"

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
}

// handleDashboard renders the open points the user may see (newest first,
// each a link that starts its process on its page), the pages worth
// improving and the five most recent conversations.
func (u *UI) handleDashboard(w http.ResponseWriter, r *http.Request, me *user) {
	ctx := r.Context()
	p := u.newPage(me, "dashboard", "dashboard.title")
	d := &dashData{}
	points, err := u.OpenPoints.Visible(ctx, me.A.UID, openpoint.DefaultLimit)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	names := map[int64]string{}
	var firstProcess int64 // the catalogue's first process: what "improve this page" starts without open points
	if cfg, err := u.Chat.ConfigurationFor(ctx, me.A.UID); err == nil {
		if list, err := u.Catalogue.ForActor(ctx, me.A.UID, cfg.UID); err == nil {
			for _, e := range list {
				names[e.UID] = e.Name
				if firstProcess == 0 {
					firstProcess = e.UID
				}
			}
		}
	}
	counts := map[site.PointCount]int{}
	skillOf := map[site.PointCount]map[int64]int{}
	for _, pt := range points {
		d.Points = append(d.Points, pointItem{Entry: pt, SkillName: names[pt.Skill]})
		k := site.PointCount{Page: pt.Page, Language: pt.Language}
		counts[k]++
		if skillOf[k] == nil {
			skillOf[k] = map[int64]int{}
		}
		skillOf[k][pt.Skill]++
	}
	sugg, err := u.Site.Suggestions(ctx, me.A, counts, 8)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	for _, sg := range sugg {
		it := suggestionItem{Suggestion: sg}
		it.LanguageName, _ = u.languageOf(ctx, me, sg.Language)
		best := 0
		for skill, n := range skillOf[site.PointCount{Page: sg.Page, Language: sg.Language}] {
			if n > best && names[skill] != "" {
				it.Skill, best = skill, n
			}
		}
		if it.Skill == 0 {
			// Every suggestion starts a tour: a page with no open points
			// gets the first process the editor may run.
			it.Skill = firstProcess
		}
		d.Pages = append(d.Pages, it)
	}
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
