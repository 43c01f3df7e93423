package mcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/chat"
	wt "waymark/internal/waymarktest"
)

// The stdio server acts for the user of its token: the tools work as over
// HTTP, and a token that names nobody is refused before serving.
func TestStdioServesTheToolsAsTheTokensUser(t *testing.T) {
	e := tourEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	clientT, serverT := sdk.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- e.App.MCP.ServeStdio(ctx, serverT, e.App.Server.Auth(), wt.Erika) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "stdio-test", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := view(t, "start_tour", call(t, cs, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"}))
	if v.Status != chat.AwaitingApproval || v.Card == nil {
		t.Fatalf("start_tour over stdio: %s, want the first card", v.Status)
	}
	api := e.As(wt.Erika).Must("GET", "/api/conversations/"+itoa(v.ID), nil, 200)
	if !strings.Contains(string(api.Body), v.Card.TurnDigest) {
		t.Errorf("the JSON API does not show erika the card started over stdio: %s", api.Body)
	}
	cs.Close()
	if err := <-served; err != nil && ctx.Err() == nil {
		t.Logf("stdio server ended: %v", err)
	}

	c2, s2 := sdk.NewInMemoryTransports()
	_ = c2
	err = e.App.MCP.ServeStdio(ctx, s2, e.App.Server.Auth(), "token-nobody-0000")
	if err == nil || !strings.Contains(err.Error(), "WAYMARK_TOKEN") {
		t.Errorf("a token naming nobody: %v, want a refusal naming WAYMARK_TOKEN", err)
	}
}
