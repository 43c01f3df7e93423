package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/access"
	"waymark/internal/agent"
)

// Inbox is the four-eyes inbox of the runtime: the runs waiting for a
// release the caller may give (GET /api/inbox), and the release itself
// (POST /api/runs/{uuid}/approval).
type Inbox interface {
	InboxAfter(ctx context.Context, actor int64, after string, limit int) (agent.InboxPage, error)
	ApproveOnWorker(ctx context.Context, actor int64, id string, d agent.Decision) (agent.Result, error)
}

var _ Inbox = (*agent.Runtime)(nil)

type (
	listInboxInput struct {
		After string `json:"after,omitempty" jsonschema:"the next of the previous page: the page after it; omitted: the first page"`
		Limit int    `json:"limit,omitempty" jsonschema:"how many runs at most (1 to 200, default 50)"`
	}
	releaseCardInput struct {
		Run        string `json:"run" jsonschema:"uuid of the run whose card to release (from list_inbox)"`
		TurnDigest string `json:"turnDigest" jsonschema:"the turnDigest of the card, as list_inbox shows it"`
	}
)

// addInboxTools registers list_inbox and release_card: a second approver
// sees and releases the four-eyes cards of others, as the web UI's inbox does.
func (s *Server) addInboxTools(srv *sdk.Server, who whoFunc) {
	sdk.AddTool(srv, &sdk.Tool{Name: "list_inbox", Title: "List cards waiting for release", Annotations: readOnly, OutputSchema: inboxSchema,
		Description: "Lists, newest first, the cards of other people's tours that wait for a second person's release (four eyes) and that the user may release: each run's uuid, turnDigest and proposed change (for release_card)."},
		tool(s, who, func(ctx context.Context, _ *sdk.CallToolRequest, a *access.Actor, in listInboxInput) (result, error) {
			if in.Limit < 0 || in.Limit > agent.MaxInboxLimit {
				return result{}, errInvalid.With("limit: want 1 to %d", agent.MaxInboxLimit)
			}
			page, err := s.d.Inbox.InboxAfter(ctx, a.UID, in.After, in.Limit)
			if err != nil {
				return result{}, err
			}
			if page.Runs == nil {
				page.Runs = []agent.Status{}
			}
			return result{data: page, text: inboxText(page)}, nil
		}))
	sdk.AddTool(srv, &sdk.Tool{Name: "release_card", Title: "Release a card", Annotations: answering, OutputSchema: output(runSchema),
		Description: "Releases (approves) a card another person's tour waits on for a second person (four eyes): the proposed change is written. Only a card list_inbox shows; the requester cannot release their own."},
		tool(s, who, func(ctx context.Context, _ *sdk.CallToolRequest, a *access.Actor, in releaseCardInput) (result, error) {
			if strings.TrimSpace(in.Run) == "" || strings.TrimSpace(in.TurnDigest) == "" {
				return result{}, errInvalid.With("run and turnDigest are required")
			}
			// A release once decided is carried out (CONVENTIONS: a decided
			// write finishes), even when the client goes away meanwhile.
			res, err := s.d.Inbox.ApproveOnWorker(context.WithoutCancel(ctx), a.UID, in.Run, agent.Decision{Approve: true, TurnDigest: in.TurnDigest})
			if err != nil {
				return result{}, err
			}
			if res.Status == nil {
				return result{}, fmt.Errorf("release of run %s: the run's status cannot be read", in.Run)
			}
			return result{data: res.Status, text: fmt.Sprintf("Released: run %s is %s.", res.Status.UUID, res.Status.Status)}, nil
		}))
}

// inboxText is the inbox as text: per run its uuid, card and proposal.
func inboxText(page agent.InboxPage) string {
	if len(page.Runs) == 0 {
		return "No cards wait for your release."
	}
	var b strings.Builder
	for _, r := range page.Runs {
		fmt.Fprintf(&b, "- run %s (user %d)", r.UUID, r.Initiator)
		if p := r.Pending; p != nil {
			fmt.Fprintf(&b, ", turnDigest %s\n", p.TurnDigest)
			for _, c := range p.Calls {
				heading := c.Heading
				if heading == "" {
					heading = c.Tool
				}
				fmt.Fprintf(&b, "  %s\n", heading)
				for _, it := range c.Preview {
					label := it.Label
					if label == "" {
						label = it.Field
					}
					fmt.Fprintf(&b, "  %s: %q → %q\n", label, it.Current, it.Proposed)
				}
			}
		} else {
			b.WriteString("\n")
		}
	}
	if page.Next != "" {
		fmt.Fprintf(&b, "More: list_inbox with after %q.\n", page.Next)
	}
	return b.String()
}
