package web

import (
	"math"

	"waymark/internal/serp"
)

// serpView is a card's search-result preview as the card draws it: the
// page's result on a desktop and on a phone, in the page's language.
type serpView struct {
	Lang       string
	Breadcrumb string
	Screens    []serpScreen
}

type serpScreen struct {
	Name        string // "desktop" or "phone"
	Label       string
	Title       string
	Description string
	Notes       []string // what the search engine cut, in the reader's words
}

func searchView(me *user, p *serp.Preview) *serpView {
	if p == nil {
		return nil
	}
	v := &serpView{Lang: p.Language, Breadcrumb: p.Breadcrumb}
	for _, s := range []struct {
		name string
		sn   serp.Snippet
	}{{"desktop", p.Desktop}, {"phone", p.Phone}} {
		sc := serpScreen{Name: s.name, Label: me.T.Get("card.serp." + s.name), Title: s.sn.Title, Description: s.sn.Description}
		if s.sn.TitleTruncated {
			sc.Notes = append(sc.Notes, me.T.Get("card.serp.titleCut", px(s.sn.TitleWidth), px(s.sn.TitleMax)))
		}
		if s.sn.DescriptionTruncated {
			sc.Notes = append(sc.Notes, me.T.Get("card.serp.descriptionCut", px(s.sn.DescriptionWidth), px(s.sn.DescriptionMax)))
		}
		v.Screens = append(v.Screens, sc)
	}
	return v
}

func px(f float64) int { return int(math.Round(f)) }
