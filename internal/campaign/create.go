package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"waymark/internal/access"
	"waymark/internal/chat"
	"waymark/internal/llmconfig"
	"waymark/internal/site"
	"waymark/internal/store"
)

// Request is what a campaign is started with (POST /api/campaigns).
type Request struct {
	// Process is the skill to run: its uid or its identifier, in the
	// owner's catalogue of the configuration.
	Process       string `json:"process"`
	Configuration int64  `json:"configuration,omitempty"` // 0: the chat's default
	// RootPage and Depth choose a subtree (Depth 0: the root page alone);
	// Filter chooses the pages with a dashboard finding; with both, the
	// pages of the subtree with the finding.
	RootPage  int64   `json:"rootPage,omitempty"`
	Depth     int     `json:"depth,omitempty"`
	Filter    string  `json:"filter,omitempty"`
	Languages []int64 `json:"languages,omitempty"` // default [0]
	// Budget is the most the campaign may cost, in the configuration's
	// currency: a JSON number of 0 or more, or absent.
	Budget      json.RawMessage `json:"budget,omitempty"`
	Concurrency int             `json:"concurrency,omitempty"` // 1 to MaxConcurrency, default DefaultConcurrency
}

// target is one page in one language a campaign covers.
type target struct{ page, language int64 }

// Create checks a request against the owner as she is now and makes the
// campaign with one item per page and language, and its first job, in one
// transaction. A request that could never run makes nothing: an unknown or
// not showable root page (ErrNotFound alike), a process not in her catalogue
// (chat.ErrUnavailable), a configuration she may not use
// (chat.ErrConfigNotFound), a process on a four-eyes configuration
// (chat.ErrFourEyes), values out of range (ErrInvalid), no page at all
// (ErrEmpty).
func (s *Service) Create(ctx context.Context, owner int64, req Request) (View, error) {
	p, err := s.plan(ctx, owner, &req)
	if err != nil {
		return View{}, err
	}
	a, cfg, skillUID, targets, budget := p.actor, p.cfg, p.process, p.targets, p.budget
	langs, _ := json.Marshal(req.Languages)
	now := s.now()
	var id int64
	insert := func(tx *store.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO campaigns (owner_uid, skill_uid, configuration_uid, root_page, depth, filter, languages,
			budget, concurrency, state, ticked_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			owner, skillUID, cfg.UID, req.RootPage, req.Depth, req.Filter, string(langs), budget, req.Concurrency, string(Running), s.freshMark(), now, now).Scan(&id); err != nil {
			return err
		}
		for i, t := range targets {
			if _, err := tx.Exec(ctx, `INSERT INTO campaign_items (campaign_id, position, page_uid, language, state) VALUES (?, ?, ?, ?, ?)`,
				id, i, t.page, t.language, string(ItemPending)); err != nil {
				return err
			}
		}
		if s.d.Queue != nil {
			return s.d.Queue.InsertCampaignTx(ctx, tx, id)
		}
		return nil
	}
	if s.d.Queue != nil {
		err = s.d.Queue.InTx(ctx, insert)
	} else {
		err = s.d.DB.InTx(ctx, insert)
	}
	if err != nil {
		return View{}, fmt.Errorf("create campaign: %w", err)
	}
	return s.Get(ctx, a, id)
}

// plan is what a request would start: checked against the owner as she is
// now, with the same refusals as Create (which makes it) and Estimate (which
// prices it).
type plan struct {
	actor   *access.Actor
	cfg     llmconfig.Configuration
	process int64
	targets []target
	budget  string
}

func (s *Service) plan(ctx context.Context, owner int64, req *Request) (plan, error) {
	a, err := s.actor(ctx, owner)
	if err != nil {
		return plan{}, err
	}
	budget, err := checkRequest(req)
	if err != nil {
		return plan{}, err
	}
	for _, l := range req.Languages {
		if !a.MayEditLanguage(l) {
			return plan{}, fmt.Errorf("%w: language %d", chat.ErrLanguageNotEditable, l)
		}
	}
	cfg, err := s.configuration(ctx, a, req.Configuration)
	if err != nil {
		return plan{}, err
	}
	skillUID, err := s.process(ctx, a, cfg, req.Process)
	if err != nil {
		return plan{}, err
	}
	targets, err := s.targets(ctx, a, *req)
	if err != nil {
		return plan{}, err
	}
	if len(targets) == 0 {
		return plan{}, ErrEmpty
	}
	if len(targets) > MaxItems {
		return plan{}, fmt.Errorf("%w: the pages chosen are %d pages and languages, at most %d may be one campaign", ErrInvalid, len(targets), MaxItems)
	}
	return plan{actor: a, cfg: cfg, process: skillUID, targets: targets, budget: budget}, nil
}

// checkRequest fills the defaults of req and checks its ranges; it returns
// the budget as stored ("" for none).
func checkRequest(req *Request) (string, error) {
	req.Process = strings.TrimSpace(req.Process)
	if req.Process == "" {
		return "", fmt.Errorf("%w: process: want a process's identifier or uid", ErrInvalid)
	}
	if req.Configuration < 0 {
		return "", fmt.Errorf("%w: configuration: want a uid", ErrInvalid)
	}
	if req.RootPage < 0 {
		return "", fmt.Errorf("%w: rootPage: want a page uid", ErrInvalid)
	}
	if req.RootPage == 0 && req.Filter == "" {
		return "", fmt.Errorf("%w: want rootPage (with depth) or filter", ErrInvalid)
	}
	if req.Depth < 0 || req.Depth > MaxDepth {
		return "", fmt.Errorf("%w: depth: want 0 to %d, got %d", ErrInvalid, MaxDepth, req.Depth)
	}
	if req.Depth > 0 && req.RootPage == 0 {
		return "", fmt.Errorf("%w: depth: needs rootPage", ErrInvalid)
	}
	if req.Filter != "" && !slices.Contains(Filters, req.Filter) {
		return "", fmt.Errorf("%w: filter: want one of %s, got %q", ErrInvalid, strings.Join(Filters, ", "), req.Filter)
	}
	if req.Concurrency == 0 {
		req.Concurrency = DefaultConcurrency
	}
	if req.Concurrency < 1 || req.Concurrency > MaxConcurrency {
		return "", fmt.Errorf("%w: concurrency: want 1 to %d, got %d", ErrInvalid, MaxConcurrency, req.Concurrency)
	}
	if len(req.Languages) == 0 {
		req.Languages = []int64{0}
	}
	seen := map[int64]bool{}
	for _, l := range req.Languages {
		if l < 0 || seen[l] {
			return "", fmt.Errorf("%w: languages: want distinct language uids, got %v", ErrInvalid, req.Languages)
		}
		seen[l] = true
	}
	budget, err := parseBudget(req.Budget)
	if err != nil {
		return "", err
	}
	return budget, nil
}

// parseBudget reads a budget: absent or null is none, else a JSON number of
// 0 or more (kept as its decimal text).
func parseBudget(raw json.RawMessage) (string, error) {
	text := strings.TrimSpace(string(raw))
	if text == "" || text == "null" {
		return "", nil
	}
	// Decoded into any, not json.Number: a json.Number takes a string
	// holding a number too ("5"), and a string is not a number.
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	n, isNumber := json.Number(""), false
	if err := dec.Decode(&v); err == nil {
		n, isNumber = v.(json.Number)
	}
	if !isNumber {
		return "", fmt.Errorf("%w: budget: want a number of 0 or more, got %s", ErrInvalid, text)
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("%w: budget: want a number of 0 or more, got %s", ErrInvalid, text)
	}
	return n.String(), nil
}

// configuration is the configuration named (0: the chat's default), when
// the owner may use it; else chat.ErrConfigNotFound alike.
func (s *Service) configuration(ctx context.Context, a *access.Actor, uid int64) (llmconfig.Configuration, error) {
	if uid == 0 {
		return s.d.Chat.ConfigurationFor(ctx, a.UID)
	}
	cfg, err := s.d.Configs.Get(ctx, uid)
	if errors.Is(err, llmconfig.ErrNotFound) || (err == nil && !llmconfig.MayUse(a, cfg)) {
		return llmconfig.Configuration{}, chat.ErrConfigNotFound
	}
	return cfg, err
}

// process resolves the process named (identifier or uid) in the owner's
// catalogue of cfg. A process is refused on a four-eyes configuration and
// to a service account, as the chat refuses its start.
func (s *Service) process(ctx context.Context, a *access.Actor, cfg llmconfig.Configuration, name string) (int64, error) {
	entries, err := s.d.Skills.Catalogue(ctx, a.UID, cfg.UID)
	if err != nil && store.Unreachable(err) {
		return 0, fmt.Errorf("catalogue: %w", err)
	}
	if err != nil {
		return 0, chat.ErrUnavailable
	}
	uid, _ := strconv.ParseInt(name, 10, 64)
	for _, e := range entries {
		if e.Identifier != name && (uid == 0 || e.UID != uid) {
			continue
		}
		switch {
		case e.Process && a.ServiceAccount:
			return 0, chat.ErrServiceAccount
		case e.Process && cfg.RequireSecondApprover:
			return 0, chat.ErrFourEyes
		}
		return e.UID, nil
	}
	return 0, chat.ErrUnavailable
}

// targets lists the pages and languages a request covers, in page-tree
// order: the subtree of the root page to its depth, or the pages with the
// filter's finding, or both; a page the owner may not show is never listed
// (and a root page she may not show is ErrNotFound, like an unknown one).
// A page she may show but not edit is listed: its item is skipped with its
// reason at its pickup.
func (s *Service) targets(ctx context.Context, a *access.Actor, req Request) ([]target, error) {
	tree, err := s.d.Site.Tree(ctx, a)
	if err != nil {
		return nil, err
	}
	var pages []site.Node // flattened, tree order
	var walk func(nodes []site.Node, depth int, within bool)
	walk = func(nodes []site.Node, depth int, within bool) {
		for _, n := range nodes {
			switch {
			case within && depth <= req.Depth:
				pages = append(pages, n)
				walk(n.Children, depth+1, true)
			case within:
			case req.RootPage == 0 || n.UID == req.RootPage:
				pages = append(pages, n)
				walk(n.Children, 1, req.RootPage != 0)
			default:
				walk(n.Children, 0, false)
			}
		}
	}
	if req.RootPage == 0 {
		var all func(nodes []site.Node)
		all = func(nodes []site.Node) {
			for _, n := range nodes {
				pages = append(pages, n)
				all(n.Children)
			}
		}
		all(tree)
	} else {
		walk(tree, 0, false)
		if len(pages) == 0 {
			return nil, site.ErrNotFound
		}
	}
	var found map[target]bool
	if req.Filter != "" {
		sugg, err := s.d.Site.Suggestions(ctx, a, nil, 0)
		if err != nil {
			return nil, err
		}
		found = map[target]bool{}
		for _, sg := range sugg {
			for _, g := range sg.Reasons {
				if g.Kind == req.Filter {
					found[target{sg.Page, sg.Language}] = true
				}
			}
		}
	}
	var out []target
	for _, n := range pages {
		for _, l := range req.Languages {
			if l != 0 && !slices.Contains(n.Translations, l) {
				continue
			}
			t := target{n.UID, l}
			if found != nil && !found[t] {
				continue
			}
			out = append(out, t)
		}
	}
	return out, nil
}
