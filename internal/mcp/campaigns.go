package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/access"
	"waymark/internal/campaign"
)

// The campaign tools' inputs: the bodies and query of the campaigns API.
type (
	startCampaignInput struct {
		Process       string   `json:"process" jsonschema:"the process to run on every page: its identifier such as seo-optimieren or its uid (from list_processes)"`
		Configuration int64    `json:"configuration,omitempty" jsonschema:"uid of the configuration to run on; omitted: the default"`
		RootPage      int64    `json:"rootPage,omitempty" jsonschema:"uid of the root page of the subtree (from list_pages); with depth"`
		Depth         int      `json:"depth,omitempty" jsonschema:"how many levels below the root page (0 to 10; 0: the root page alone)"`
		Filter        string   `json:"filter,omitempty" jsonschema:"the pages with a dashboard finding: descriptionMissing, descriptionShort, titleMissing or titleShort (with rootPage: within its subtree)"`
		Languages     []int64  `json:"languages,omitempty" jsonschema:"uids of the languages (default [0])"`
		Budget        *float64 `json:"budget,omitempty" jsonschema:"the most the campaign may cost (0 or more); omitted: none"`
		Concurrency   int      `json:"concurrency,omitempty" jsonschema:"how many pages' tours run at once (1 to 8, default 2)"`
	}
	campaignInput struct {
		Campaign int64 `json:"campaign" jsonschema:"id of the campaign"`
	}
	listCampaignCardsInput struct {
		Campaign int64  `json:"campaign" jsonschema:"id of the campaign"`
		Page     int64  `json:"page,omitempty" jsonschema:"only the cards of this page uid"`
		Field    string `json:"field,omitempty" jsonschema:"only cards that change this field (description, seoTitle …)"`
		Kind     string `json:"kind,omitempty" jsonschema:"only cards of this tool (update_page_metadata, update_content)"`
		Offset   int    `json:"offset,omitempty" jsonschema:"cards to pass over (paging)"`
		Limit    int    `json:"limit,omitempty" jsonschema:"cards at most (1 to 200, default 50)"`
	}
	answerCampaignCardsInput struct {
		Campaign    int64              `json:"campaign" jsonschema:"id of the campaign"`
		Answer      string             `json:"answer" jsonschema:"apply (write the proposals), variant (ask for other proposals), skip or keep (leave the fields as they are)"`
		Instruction string             `json:"instruction,omitempty" jsonschema:"with variant: what the new proposals should do differently"`
		Cards       []campaign.CardRef `json:"cards" jsonschema:"the cards to answer alike, each with its conversation and turnDigest as list_campaign_cards showed them"`
	}
)

var (
	campaignSchema = output(object(map[string]*jsonschema.Schema{
		"id": {Type: "integer"}, "state": {Type: "string"}, "counts": {Type: "object"},
		"estimatedSecondsLeft": {Types: []string{"integer", "null"}}, "spent": {Type: "object"},
	}, "id", "state", "counts", "spent"))
	campaignEstimateSchema = output(object(map[string]*jsonschema.Schema{
		"pages": {Type: "integer"}, "basis": {Type: "string"}, "meanTokensIn": {Type: "integer"}, "meanTokensOut": {Type: "integer"},
		"estimatedCost": {Types: []string{"number", "null"}}, "overBudget": {Type: "boolean"},
	}, "pages", "basis", "meanTokensIn", "meanTokensOut", "estimatedCost"))
	campaignCardsSchema = output(object(map[string]*jsonschema.Schema{
		"cards": {Type: "array"}, "total": {Type: "integer"}, "offset": {Type: "integer"}, "limit": {Type: "integer"},
	}, "cards", "total"))
	campaignResultsSchema = output(object(map[string]*jsonschema.Schema{
		"results": {Type: "array", Items: object(map[string]*jsonschema.Schema{
			"conversation": {Type: "integer"}, "turnDigest": {Type: "string"}, "outcome": {Type: "string"}, "code": {Type: "string"},
		}, "conversation", "outcome")},
	}, "results"))
)

// addCampaignTools registers the campaign tools: the campaigns API for a
// model, answered by the same service.
func (s *Server) addCampaignTools(srv *sdk.Server, who whoFunc) {
	sdk.AddTool(srv, &sdk.Tool{Name: "start_campaign", Title: "Start a campaign", Annotations: talking, OutputSchema: campaignSchema,
		Description: "Runs a process over many pages in the background — a subtree (rootPage and depth) or the pages with a dashboard finding (filter) — each page its own tour that waits at its first card; nothing is written until the cards are answered (answer_campaign_cards). Returns the campaign with its counts."},
		tool(s, who, s.startCampaign))
	sdk.AddTool(srv, &sdk.Tool{Name: "estimate_campaign", Title: "Estimate a campaign's cost", Annotations: readOnly, OutputSchema: campaignEstimateSchema,
		Description: "Answers what start_campaign with the same arguments would cover and cost, before it starts: its pages, the mean tokens per tour of the process's earlier tours (or a stated default), the estimated cost in the configuration's currency (null without prices) and whether it passes the budget. Starts nothing."},
		tool(s, who, s.estimateCampaign))
	sdk.AddTool(srv, &sdk.Tool{Name: "get_campaign", Title: "Read a campaign", Annotations: readOnly, OutputSchema: campaignSchema,
		Description: "Reads a campaign: its state (running, paused, cancelled, done, budget_reached), its pages by state (pending, running, with proposals, skipped, failed, done), what it spent against its budget and the estimated time left."},
		tool(s, who, func(ctx context.Context, _ *sdk.CallToolRequest, a *access.Actor, in campaignInput) (result, error) {
			v, err := s.d.Campaigns.Get(ctx, a, in.Campaign)
			if err != nil {
				return result{}, err
			}
			return result{data: v, text: campaignText(v)}, nil
		}))
	sdk.AddTool(srv, &sdk.Tool{Name: "list_campaign_cards", Title: "List a campaign's cards", Annotations: readOnly, OutputSchema: campaignCardsSchema,
		Description: "Lists the cards a campaign's tours wait for, by page: each card's page, field, current and proposed value and the recommended length range, with the conversation and turnDigest answer_campaign_cards needs."},
		tool(s, who, s.listCampaignCards))
	sdk.AddTool(srv, &sdk.Tool{Name: "answer_campaign_cards", Title: "Answer a campaign's cards", Annotations: answering, OutputSchema: campaignResultsSchema,
		Description: "Answers several cards of a campaign alike (apply, variant, skip or keep), each against its own turnDigest: a card that changed since it was listed is refused and named (stale_card), the others go on. Returns one result per card."},
		tool(s, who, func(ctx context.Context, _ *sdk.CallToolRequest, a *access.Actor, in answerCampaignCardsInput) (result, error) {
			res, err := s.d.Campaigns.Answer(ctx, a, in.Campaign, campaign.Answers{Answer: in.Answer, Instruction: in.Instruction, Cards: in.Cards})
			if err != nil {
				return result{}, err
			}
			var b strings.Builder
			for _, r := range res {
				fmt.Fprintf(&b, "- conversation %d: %s", r.Conversation, r.Outcome)
				if r.Code != "" {
					fmt.Fprintf(&b, " (%s: %s)", r.Code, r.Message)
				}
				b.WriteString("\n")
			}
			return result{data: map[string]any{"results": res}, text: b.String()}, nil
		}))
}

func (in startCampaignInput) request() campaign.Request {
	req := campaign.Request{Process: in.Process, Configuration: in.Configuration, RootPage: in.RootPage, Depth: in.Depth,
		Filter: in.Filter, Languages: in.Languages, Concurrency: in.Concurrency}
	if in.Budget != nil {
		req.Budget, _ = json.Marshal(*in.Budget)
	}
	return req
}

func (s *Server) estimateCampaign(ctx context.Context, _ *sdk.CallToolRequest, a *access.Actor, in startCampaignInput) (result, error) {
	e, err := s.d.Campaigns.Estimate(ctx, a.UID, in.request())
	if err != nil {
		return result{}, err
	}
	text := fmt.Sprintf("%d pages × %d input and %d output tokens per tour", e.Pages, e.MeanTokensIn, e.MeanTokensOut)
	if e.Basis == campaign.BasisEarlierTours {
		text += fmt.Sprintf(" (the mean of the process's %d earlier tours)", e.Tours)
	} else {
		text += " (a default: the process has no earlier tour)"
	}
	if e.EstimatedCost != nil {
		text += fmt.Sprintf(": about %.2f in the configuration's currency.", *e.EstimatedCost)
	} else {
		text += ": the configuration has no prices, so no cost."
	}
	if e.OverBudget {
		text += fmt.Sprintf(" That passes the budget of %s: the campaign would stop once its tours cost it.", e.Budget)
	}
	return result{data: e, text: text}, nil
}

func (s *Server) startCampaign(ctx context.Context, _ *sdk.CallToolRequest, a *access.Actor, in startCampaignInput) (result, error) {
	v, err := s.d.Campaigns.Create(ctx, a.UID, in.request())
	if err != nil {
		return result{}, err
	}
	return result{data: v, text: campaignText(v)}, nil
}

func (s *Server) listCampaignCards(ctx context.Context, _ *sdk.CallToolRequest, a *access.Actor, in listCampaignCardsInput) (result, error) {
	page, err := s.d.Campaigns.Cards(ctx, a, in.Campaign, campaign.CardFilter{Page: in.Page, Field: in.Field, Kind: in.Kind, Offset: in.Offset, Limit: in.Limit})
	if err != nil {
		return result{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d cards waiting (showing %d from %d):\n", page.Total, len(page.Cards), page.Offset)
	for _, c := range page.Cards {
		fmt.Fprintf(&b, "- page %d %q, conversation %d, turnDigest %s:", c.Page, c.PageTitle, c.Conversation, c.TurnDigest)
		for _, f := range c.Fields {
			fmt.Fprintf(&b, " %s %q → %q", f.Field, f.Current, f.Proposed)
			if f.Measure != nil {
				fmt.Fprintf(&b, " (%d characters, recommended %d to %d)", f.Measure.Count, f.Measure.Min, f.Measure.Max)
			}
		}
		b.WriteString("\n")
	}
	return result{data: page, text: b.String()}, nil
}

// campaignText is a campaign as a few lines of text.
func campaignText(v campaign.View) string {
	c := v.Counts
	text := fmt.Sprintf("Campaign %d: %s. %d pages: %d pending, %d running, %d with proposals, %d skipped, %d failed, %d done.",
		v.ID, v.State, c.Total, c.Pending, c.Running, c.Proposals, c.Skipped, c.Failed, c.Done)
	if v.EstimatedSecondsLeft != nil {
		text += fmt.Sprintf(" About %d s left.", *v.EstimatedSecondsLeft)
	}
	text += fmt.Sprintf(" Spent %g", v.Spent.Cost)
	if string(v.Budget) != "null" {
		text += " of a budget of " + string(v.Budget)
	}
	text += "."
	if v.State == campaign.BudgetReached {
		text += " It reached its budget: no further page is started; its cards stay answerable."
	}
	return text
}
