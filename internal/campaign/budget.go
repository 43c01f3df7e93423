package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"waymark/internal/cost"
	"waymark/internal/store"
)

// The estimate's default, when the process has no earlier tour with
// recorded usage: the tokens a tour of a process takes to its first card
// and its answers, taken from the SEO processes' tours of a typical page
// (the process's instructions, its tools, the page's content read back
// over a few model calls).
const (
	DefaultTourTokensIn  = 30000
	DefaultTourTokensOut = 2000
	// estimateTours bounds the earlier tours the mean is taken of: the
	// latest, so a process changed since weighs its new tours.
	estimateTours = 200
)

// The bases of an estimate.
const (
	BasisEarlierTours = "earlier_tours"
	BasisDefault      = "default"
)

// Estimate is what a campaign would cost before it starts: its pages ×
// the mean tokens of its process's earlier tours (or the default), priced
// with its configuration's prices.
type Estimate struct {
	Pages int    `json:"pages"` // pages × languages: its tours
	Basis string `json:"basis"` // earlier_tours or default
	// Tours is how many earlier tours the mean is of (0 with the default).
	Tours         int   `json:"tours"`
	MeanTokensIn  int64 `json:"meanTokensIn"`
	MeanTokensOut int64 `json:"meanTokensOut"`
	TokensIn      int64 `json:"tokensIn"`  // pages × meanTokensIn
	TokensOut     int64 `json:"tokensOut"` // pages × meanTokensOut
	// EstimatedCost is in the configuration's currency; null when the
	// configuration has no prices.
	EstimatedCost *float64        `json:"estimatedCost"`
	Configuration int64           `json:"configuration"`
	Process       int64           `json:"process"`
	Budget        json.RawMessage `json:"budget"` // as the request named it, or null
	// OverBudget: the estimated cost passes the budget named.
	OverBudget bool `json:"overBudget"`
}

// Estimate answers what the campaign req would start and cost, checked as
// Create checks it (with its refusals) and making nothing.
func (s *Service) Estimate(ctx context.Context, owner int64, req Request) (Estimate, error) {
	p, err := s.plan(ctx, owner, &req)
	if err != nil {
		return Estimate{}, err
	}
	e := Estimate{Pages: len(p.targets), Configuration: p.cfg.UID, Process: p.process, Budget: json.RawMessage("null")}
	var sumIn, sumOut int64
	err = s.d.DB.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(t.tin), 0), COALESCE(SUM(t.tout), 0) FROM (
			SELECT u.conversation_id, SUM(u.prompt_tokens) AS tin, SUM(u.completion_tokens) AS tout
			FROM run_usage u JOIN conversations c ON c.id = u.conversation_id
			WHERE c.skill_uid = ? AND u.conversation_id > 0
			GROUP BY u.conversation_id ORDER BY u.conversation_id DESC LIMIT ?) t`, p.process, estimateTours).Scan(&e.Tours, &sumIn, &sumOut)
	if err != nil {
		return Estimate{}, fmt.Errorf("earlier tours of process %d: %w", p.process, err)
	}
	if e.Tours > 0 {
		e.Basis = BasisEarlierTours
		e.MeanTokensIn = (sumIn + int64(e.Tours)/2) / int64(e.Tours)
		e.MeanTokensOut = (sumOut + int64(e.Tours)/2) / int64(e.Tours)
	} else {
		e.Basis, e.MeanTokensIn, e.MeanTokensOut = BasisDefault, DefaultTourTokensIn, DefaultTourTokensOut
	}
	e.TokensIn, e.TokensOut = e.MeanTokensIn*int64(e.Pages), e.MeanTokensOut*int64(e.Pages)
	if p.cfg.PriceInputPerMTok > 0 || p.cfg.PriceOutputPerMTok > 0 {
		c := roundCost((float64(e.TokensIn)*p.cfg.PriceInputPerMTok + float64(e.TokensOut)*p.cfg.PriceOutputPerMTok) / 1e6)
		e.EstimatedCost = &c
	}
	if p.budget != "" {
		e.Budget = json.RawMessage(p.budget)
		b, _ := strconv.ParseFloat(p.budget, 64)
		e.OverBudget = e.EstimatedCost != nil && *e.EstimatedCost > b
	}
	return e, nil
}

// spent is what the tours of campaign id cost so far: the usage recorded
// for their conversations.
func spent(ctx context.Context, q store.Querier, id int64) (cost.Total, error) {
	var t cost.Total
	err := q.QueryRow(ctx, `SELECT COALESCE(SUM(u.prompt_tokens), 0), COALESCE(SUM(u.completion_tokens), 0), COALESCE(SUM(u.cost), 0)
		FROM run_usage u WHERE u.conversation_id IN (SELECT i.conversation_id FROM campaign_items i WHERE i.campaign_id = ? AND i.conversation_id > 0)`, id).
		Scan(&t.PromptTokens, &t.CompletionTokens, &t.Cost)
	if err != nil {
		return cost.Total{}, fmt.Errorf("cost of campaign %d: %w", id, err)
	}
	t.Cost = roundCost(t.Cost)
	return t, nil
}

// budgetOf is a campaign's budget as a number; ok is false without one.
func budgetOf(r row) (float64, bool) {
	if r.budget == "" {
		return 0, false
	}
	b, err := strconv.ParseFloat(r.budget, 64)
	return b, err == nil
}

// roundCost keeps a cost to a millionth of the currency, as the costs
// report does.
func roundCost(c float64) float64 { return math.Round(c*1e6) / 1e6 }
