package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"waymark/internal/campaign"
	"waymark/internal/chat"
	"waymark/internal/process"
)

// The campaign screens: a form on the dashboard starts one over a page
// subtree or a dashboard finding, /campaigns lists them, /campaigns/{id}
// shows its progress (refreshed every few seconds) and its review list.
// Every action goes through the campaign service the API uses, so the
// checks and the outcomes are the API's.

func (u *UI) registerCampaigns(m mountFunc) {
	if u.Campaigns == nil {
		return
	}
	m("GET /campaigns", u.authed(u.handleCampaigns))
	m("POST /campaigns", u.authed(u.handleCampaignCreate))
	m("GET /campaigns/{id}", u.authed(u.handleCampaign))
	m("GET /campaigns/{id}/progress", u.authed(u.handleCampaignProgress))
	m("GET /campaigns/{id}/review", u.authed(u.handleCampaignReview))
	m("POST /campaigns/{id}/{event}", u.authed(u.handleCampaignChange))
	m("POST /campaigns/{id}/answers", u.authed(u.handleCampaignAnswers))
}

// campaignForm is the dashboard's form to start a campaign: its choices and
// the values and error of a refused post.
type campaignForm struct {
	Processes      []process.CatalogueEntry
	Filters        []string
	Languages      []langOption
	MaxDepth       int
	MaxConcurrency int
	// The values posted (or the defaults).
	Process, Filter, RootPage, Depth, Concurrency, Budget string
	Language                                              int64
	Error                                                 string
	// Estimate is the cost estimate of the values posted, in the reader's
	// words (nil before one was asked for): the form then confirms the
	// start.
	Estimate *estimateText
}

// estimateText is a campaign's estimate as the form shows it.
type estimateText struct {
	Tokens, Cost, Over string
}

type langOption struct {
	UID  int64
	Name string
}

func (u *UI) campaignForm(r *http.Request, me *user) *campaignForm {
	ctx := r.Context()
	f := &campaignForm{Filters: campaign.Filters, MaxDepth: campaign.MaxDepth, MaxConcurrency: campaign.MaxConcurrency,
		Depth: "1", Concurrency: strconv.Itoa(campaign.DefaultConcurrency), Filter: "descriptionMissing"}
	if cfg, err := u.Chat.ConfigurationFor(ctx, me.A.UID); err == nil {
		if list, err := u.Catalogue.ForActor(ctx, me.A.UID, cfg.UID); err == nil {
			f.Processes = u.localCatalogue(ctx, me, list)
		}
	}
	if langs, err := u.Site.Languages(ctx, me.A); err == nil {
		for _, l := range langs {
			f.Languages = append(f.Languages, langOption{UID: l.UID, Name: l.Title})
		}
	}
	return f
}

type campaignsData struct {
	List []campaignRow
	Form *campaignForm
}

type campaignRow struct {
	campaign.View
	ProcessName string
	Scope       string
}

// scope names what a campaign covers, in the reader's words.
func (u *UI) scope(me *user, v campaign.View) string {
	var parts []string
	if v.RootPage != 0 {
		parts = append(parts, me.T.Get("campaign.scopeTree", v.RootPage, v.Depth))
	}
	if v.Filter != "" {
		parts = append(parts, me.T.Get("campaign.filter."+v.Filter))
	}
	return strings.Join(parts, " · ")
}

func (u *UI) handleCampaigns(w http.ResponseWriter, r *http.Request, me *user) {
	list, err := u.Campaigns.List(r.Context(), me.A)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	d := &campaignsData{Form: u.campaignForm(r, me)}
	names := map[int64]string{}
	for _, e := range d.Form.Processes {
		names[e.UID] = e.Name
	}
	for _, v := range list {
		d.List = append(d.List, campaignRow{View: v, ProcessName: cmpOr(names[v.Process], me.T.Get("campaign.processNumber", v.Process)), Scope: u.scope(me, v)})
	}
	p := u.newPage(me, "campaigns", "campaigns.title")
	p.Data = d
	u.render(w, r, "campaigns", "layout", p, http.StatusOK)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// handleCampaignCreate starts a campaign from the dashboard's form through
// campaign.Service.Create: a refused request shows its reason in the form,
// in the editor's language, and makes nothing. Before the start the form
// asks for the estimate (step "estimate", campaign.Service.Estimate, which
// makes nothing): it shows the pages, the tokens and the cost, and the
// start button to confirm.
func (u *UI) handleCampaignCreate(w http.ResponseWriter, r *http.Request, me *user) {
	f := u.campaignForm(r, me)
	f.Process, f.Filter = r.PostFormValue("process"), r.PostFormValue("filter")
	f.RootPage, f.Depth = strings.TrimSpace(r.PostFormValue("rootPage")), strings.TrimSpace(r.PostFormValue("depth"))
	f.Concurrency, f.Budget = strings.TrimSpace(r.PostFormValue("concurrency")), strings.TrimSpace(r.PostFormValue("budget"))
	req := campaign.Request{Process: f.Process, Filter: f.Filter}
	bad := ""
	num := func(name, s string, dst *int64) {
		if s == "" || bad != "" {
			return
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			bad = name
			return
		}
		*dst = n
	}
	var root, depth, conc, lang int64
	num("rootPage", f.RootPage, &root)
	num("depth", f.Depth, &depth)
	num("concurrency", f.Concurrency, &conc)
	num("language", r.PostFormValue("language"), &lang)
	f.Language = lang
	if f.Budget != "" && bad == "" {
		// A decimal number, with a comma or a point: not "NaN", "Inf" or a
		// hexadecimal float, which strconv reads as numbers too.
		b := strings.Replace(f.Budget, ",", ".", 1)
		if _, err := strconv.ParseFloat(b, 64); err != nil || !json.Valid([]byte(b)) {
			bad = "budget"
		} else {
			req.Budget = json.RawMessage(b)
		}
	}
	if root == 0 {
		depth = 0 // a depth without a root page means nothing: the filter alone chooses
	}
	req.RootPage, req.Depth, req.Concurrency, req.Languages = root, int(depth), int(conc), []int64{lang}
	switch {
	case bad != "":
		f.Error = me.T.Get("campaign.error.number", me.T.Get("campaign.field."+bad))
	case r.PostFormValue("step") == "estimate":
		e, err := u.Campaigns.Estimate(r.Context(), me.A.UID, req)
		if err != nil {
			u.logErr(r.Context(), "estimate campaign", err)
			f.Error = u.campaignError(me, err)
			break
		}
		f.Estimate = campaignEstimateText(me, e)
	default:
		v, err := u.Campaigns.Create(r.Context(), me.A.UID, req)
		if err == nil {
			w.Header().Set("HX-Redirect", fmt.Sprintf("/campaigns/%d", v.ID))
			w.WriteHeader(http.StatusNoContent)
			return
		}
		u.logErr(r.Context(), "create campaign", err)
		f.Error = u.campaignError(me, err)
	}
	p := u.newPage(me, "dashboard", "dashboard.title")
	p.Data = &campaignsData{Form: f}
	u.render(w, r, "campaigns", "campaign-form", p, http.StatusOK)
}

// campaignEstimateText is an estimate in the reader's words.
func campaignEstimateText(me *user, e campaign.Estimate) *estimateText {
	sep := ","
	if me.T.Lang() == "de" {
		sep = "."
	}
	t := &estimateText{}
	basis := me.T.Get("campaign.estimate.default")
	switch {
	case e.Basis == campaign.BasisEarlierTours && e.Tours == 1:
		basis = me.T.Get("campaign.estimate.earlierOne")
	case e.Basis == campaign.BasisEarlierTours:
		basis = me.T.Get("campaign.estimate.earlier", e.Tours)
	}
	in, out := group(e.MeanTokensIn, sep), group(e.MeanTokensOut, sep)
	if e.Pages == 1 {
		t.Tokens = me.T.Get("campaign.estimate.tokensOne", in, out, basis)
	} else {
		t.Tokens = me.T.Get("campaign.estimate.tokens", e.Pages, in, out, basis)
	}
	if e.EstimatedCost == nil {
		t.Cost = me.T.Get("campaign.estimate.unpriced")
	} else {
		t.Cost = me.T.Get("campaign.estimate.cost", money(me, *e.EstimatedCost))
	}
	if e.OverBudget {
		b, _ := strconv.ParseFloat(string(e.Budget), 64)
		t.Over = me.T.Get("campaign.estimate.over", money(me, b))
	}
	return t
}

// money is an amount in the configuration's currency, to four places, in
// the reader's notation.
func money(me *user, v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	if me.T.Lang() == "de" {
		s = strings.Replace(s, ".", ",", 1)
	}
	return s
}

// campaignError is the reader's sentence for a refused campaign request:
// the code's text, with what the request named wrong when the service said.
func (u *UI) campaignError(me *user, err error) string {
	code := errCode(err)
	if k := "campaign.error." + code; hasKey(k) {
		return me.T.Get(k)
	}
	msg := u.errorText(me, code)
	if code == "bad_request" {
		if _, detail, ok := strings.Cut(err.Error(), "invalid request: "); ok {
			msg += " (" + detail + ")"
		}
	}
	return msg
}

type campaignData struct {
	campaign.View
	ProcessName string
	Scope       string
	Left        string // the estimate in the reader's words
	Spent       string // what its tours cost so far, against its budget
	Done        int    // pages with no more work: done, skipped, failed
	Percent     int
	Skipped     []skippedPage
	Cards       []reviewCard
	Total       int
	Offset      int
	Limit       int
	Prev, Next  string // the review list's neighbouring pages' links
	PageFilter  int64
	Field       string
	Kind        string
	Results     []answerResult
	Error       string
	Notice      string
	// Why pause, resume and cancel cannot act ("" when they can).
	NoPause, NoResume, NoCancel string
	Live                        bool // the progress refreshes itself
}

type skippedPage struct {
	Title, Reason string
}

type reviewCard struct {
	campaign.Card
	Ref    string // conversation|digest, a checkbox's value
	Fields []reviewField
	Lang   string
	Search *serpView // the page's search result with the proposal, as the chat's card shows it
}

type reviewField struct {
	campaign.CardField
	Cur, Prop  []segment
	Length     string
	OutOfRange bool
}

type answerResult struct {
	Title   string
	Outcome string
	Refused bool
}

func (u *UI) campaignID(r *http.Request) int64 {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	return id
}

// campaignData reads campaign id and one page of its review list (the
// request's page, field, kind and offset); an unknown campaign and
// another user's are campaign.ErrNotFound alike.
func (u *UI) campaignData(r *http.Request, me *user, q url.Values, withCards bool) (*campaignData, error) {
	ctx := r.Context()
	d := &campaignData{Limit: 20}
	var v campaign.View
	var list campaign.CardPage
	var err error
	if withCards {
		d.PageFilter, _ = strconv.ParseInt(q.Get("page"), 10, 64)
		d.Field, d.Kind = q.Get("field"), q.Get("kind")
		d.Offset, _ = strconv.Atoi(q.Get("offset"))
		d.Offset = max(d.Offset, 0)
		v, list, err = u.Campaigns.Review(ctx, me.A, u.campaignID(r), campaign.CardFilter{Page: d.PageFilter, Field: d.Field, Kind: d.Kind, Offset: d.Offset, Limit: d.Limit})
	} else {
		v, err = u.Campaigns.Get(ctx, me.A, u.campaignID(r))
	}
	if err != nil {
		return nil, err
	}
	d.View, d.Scope = v, u.scope(me, v)
	d.ProcessName = me.T.Get("campaign.processNumber", v.Process)
	if list, err := u.Catalogue.ForActor(ctx, me.A.UID, v.Configuration); err == nil {
		for _, e := range list {
			if e.UID == v.Process {
				d.ProcessName = u.skillName(ctx, me, e.UID, e.Name)
			}
		}
	}
	c := v.Counts
	d.Done = c.Done + c.Skipped + c.Failed
	if c.Total > 0 {
		d.Percent = (d.Done + c.Proposals) * 100 / c.Total
	}
	if v.EstimatedSecondsLeft != nil {
		left := "campaign.left"
		if v.State == campaign.Paused {
			left = "campaign.leftOnResume" // nothing is worked until then
		}
		d.Left = me.T.Get(left, max((*v.EstimatedSecondsLeft+59)/60, 1))
	}
	if b, err := strconv.ParseFloat(string(v.Budget), 64); err == nil {
		d.Spent = me.T.Get("campaign.spentOfBudget", money(me, v.Spent.Cost), money(me, b))
	} else if v.Spent.PromptTokens+v.Spent.CompletionTokens > 0 {
		d.Spent = me.T.Get("campaign.spent", money(me, v.Spent.Cost))
	}
	d.Live = v.State == campaign.Running
	switch v.State {
	case campaign.Running:
		d.NoResume = me.T.Get("campaign.why.running")
	case campaign.Paused:
		d.NoPause = me.T.Get("campaign.why.paused")
	default:
		ended := me.T.Get("campaign.why.ended")
		d.NoPause, d.NoResume, d.NoCancel = ended, ended, ended
	}
	if items, err := u.Campaigns.Items(ctx, me.A, v.ID, campaign.ItemSkipped, 50); err == nil {
		for _, it := range items {
			sp := skippedPage{Title: u.Site.Title(ctx, me.A, it.Page, it.Language), Reason: u.errorText(me, it.Reason)}
			if k := "campaign.reason." + it.Reason; hasKey(k) {
				sp.Reason = me.T.Get(k)
			}
			if sp.Title == "" {
				sp.Title = me.T.Get("chat.pageNumber", it.Page)
			}
			d.Skipped = append(d.Skipped, sp)
		}
	}
	if !withCards {
		return d, nil
	}
	d.Total = list.Total
	for _, c := range list.Cards {
		rc := reviewCard{Card: c, Ref: fmt.Sprintf("%d|%s", c.Conversation, c.TurnDigest)}
		rc.Lang, _ = u.languageOf(ctx, me, c.Language)
		for _, call := range c.Calls {
			if rc.Search == nil {
				rc.Search = searchView(me, call.SearchPreview)
			}
		}
		if rc.PageTitle == "" {
			rc.PageTitle = me.T.Get("chat.pageNumber", c.Page)
		}
		for _, f := range c.Fields {
			rf := reviewField{CardField: f}
			rf.Cur, rf.Prop = wordDiff(f.Current, f.Proposed)
			if m := f.Measure; m != nil {
				rf.Length = me.T.Get("card.length", m.Count, m.Min, m.Max)
				rf.OutOfRange = m.Count < m.Min || m.Count > m.Max
			}
			rc.Fields = append(rc.Fields, rf)
		}
		d.Cards = append(d.Cards, rc)
	}
	link := func(off int) string {
		q := url.Values{}
		if d.PageFilter != 0 {
			q.Set("page", strconv.FormatInt(d.PageFilter, 10))
		}
		if d.Field != "" {
			q.Set("field", d.Field)
		}
		if d.Kind != "" {
			q.Set("kind", d.Kind)
		}
		if off > 0 {
			q.Set("offset", strconv.Itoa(off))
		}
		s := fmt.Sprintf("/campaigns/%d", v.ID)
		if len(q) > 0 {
			s += "?" + q.Encode()
		}
		return s + "#review"
	}
	if d.Offset > 0 {
		d.Prev = link(max(d.Offset-d.Limit, 0))
	}
	if d.Offset+d.Limit < d.Total {
		d.Next = link(d.Offset + d.Limit)
	}
	return d, nil
}

func (u *UI) handleCampaign(w http.ResponseWriter, r *http.Request, me *user) {
	d, err := u.campaignData(r, me, r.URL.Query(), true)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "campaigns", "campaign.title")
	p.Title = me.T.Get("campaign.heading", d.ID, d.ProcessName)
	p.Data = d
	u.render(w, r, "campaign", "layout", p, http.StatusOK)
}

// handleCampaignProgress renders the progress alone (the page polls it).
func (u *UI) handleCampaignProgress(w http.ResponseWriter, r *http.Request, me *user) {
	d, err := u.campaignData(r, me, nil, false)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "campaigns", "campaign.title")
	p.Data = d
	u.render(w, r, "campaign", "campaign-progress", p, http.StatusOK)
}

// handleCampaignReview renders the review list alone, as it is now (the
// progress's "refresh the list" swaps it in; checked boxes are dropped).
func (u *UI) handleCampaignReview(w http.ResponseWriter, r *http.Request, me *user) {
	d, err := u.campaignData(r, me, r.URL.Query(), true)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "campaigns", "campaign.title")
	p.Data = d
	u.render(w, r, "campaign", "campaign-review", p, http.StatusOK)
}

// handleCampaignChange pauses, resumes or cancels a campaign and shows its
// progress as it is now; a change its state does not allow is named.
func (u *UI) handleCampaignChange(w http.ResponseWriter, r *http.Request, me *user) {
	ev := campaign.Event(r.PathValue("event"))
	if ev != campaign.EventPause && ev != campaign.EventResume && ev != campaign.EventCancel {
		u.fail(w, r, me, campaign.ErrNotFound)
		return
	}
	_, actErr := u.Campaigns.Change(r.Context(), me.A, u.campaignID(r), ev)
	if actErr != nil && errCode(actErr) == "not_found" {
		u.fail(w, r, me, actErr)
		return
	}
	d, err := u.campaignData(r, me, nil, false)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	if actErr != nil {
		u.logErr(r.Context(), "campaign change", actErr)
		d.Error = u.campaignError(me, actErr)
	} else {
		d.Notice = me.T.Get("campaign.changed." + string(ev))
	}
	p := u.newPage(me, "campaigns", "campaign.title")
	p.Data = d
	u.render(w, r, "campaign", "campaign-progress", p, http.StatusOK)
}

// handleCampaignAnswers answers one card (its own four buttons: "one" is
// answer|conversation|digest) or the cards selected (answer and "card"
// values) through campaign.Service.Answer, then shows the review list as
// it is now with one result per card: a card changed since the list was
// drawn is named as refused, the others went on.
func (u *UI) handleCampaignAnswers(w http.ResponseWriter, r *http.Request, me *user) {
	ctx := r.Context()
	in := campaign.Answers{Answer: r.PostFormValue("answer"), Instruction: strings.TrimSpace(r.PostFormValue("instruction"))}
	refs := r.PostForm["card"]
	if one := r.PostFormValue("one"); one != "" {
		ans, ref, _ := strings.Cut(one, "|")
		in.Answer, refs = ans, []string{ref}
		// One card's variant takes the wish typed at that card; without one,
		// the list's wish for the selected cards.
		conv, _, _ := strings.Cut(ref, "|")
		if own := strings.TrimSpace(r.PostFormValue("instruction-" + conv)); own != "" {
			in.Instruction = own
		}
	}
	if in.Answer != chat.AnswerVariant {
		in.Instruction = ""
	}
	titles := map[int64]string{}
	for _, s := range refs {
		conv, dig, _ := strings.Cut(s, "|")
		id, _ := strconv.ParseInt(conv, 10, 64)
		in.Cards = append(in.Cards, campaign.CardRef{Conversation: id, TurnDigest: dig})
		titles[id] = r.PostFormValue("title-" + conv)
	}
	var results []campaign.Result
	var actErr error
	if len(in.Cards) == 0 {
		actErr = fmt.Errorf("%w: no card selected", campaign.ErrInvalid)
	} else {
		results, actErr = u.Campaigns.Answer(ctx, me.A, u.campaignID(r), in)
	}
	if actErr != nil && errCode(actErr) == "not_found" {
		u.fail(w, r, me, actErr)
		return
	}
	q := url.Values{}
	for _, k := range []string{"page", "field", "kind", "offset"} {
		if v := r.PostFormValue("q-" + k); v != "" {
			q.Set(k, v)
		}
	}
	d, err := u.campaignData(r, me, q, true)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	if actErr != nil {
		u.logErr(ctx, "campaign answers", actErr)
		d.Error = me.T.Get("campaign.error.noneSelected")
		if len(in.Cards) > 0 {
			d.Error = u.campaignError(me, actErr)
		}
	}
	for _, res := range results {
		t := cmpOr(titles[res.Conversation], me.T.Get("campaign.conversation", res.Conversation))
		ar := answerResult{Title: t, Refused: res.Outcome == "refused"}
		switch res.Outcome {
		case "refused":
			ar.Outcome = me.T.Get("campaign.result.refused", u.errorText(me, res.Code))
		case "awaiting_release":
			ar.Outcome = me.T.Get("campaign.result.awaiting")
		default:
			ar.Outcome = me.T.Get("campaign.result." + in.Answer)
		}
		d.Results = append(d.Results, ar)
	}
	p := u.newPage(me, "campaigns", "campaign.title")
	p.Data = d
	u.render(w, r, "campaign", "campaign-review", p, http.StatusOK)
}
