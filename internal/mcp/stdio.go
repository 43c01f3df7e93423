package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/access"
)

// TokenUser names the user of an API token (auth.Authenticator.FromToken).
type TokenUser interface {
	FromToken(ctx context.Context, token string) (int64, error)
}

// ServeStdio serves the tools over t (stdio: `waymark mcp`) to one local
// client until it goes away or ctx ends, acting for the user of token. The
// token is checked before serving and again on every call, so a token
// deleted or a user disabled meanwhile is refused as the JSON API refuses it.
func (s *Server) ServeStdio(ctx context.Context, t sdk.Transport, tokens TokenUser, token string) error {
	who := func(ctx context.Context, _ *sdk.RequestExtra) (*access.Actor, error) {
		uid, err := tokens.FromToken(ctx, token)
		if err != nil {
			return nil, err
		}
		return s.load(ctx, uid)
	}
	if _, err := who(ctx, nil); err != nil {
		return fmt.Errorf("the token (WAYMARK_TOKEN): %w", err)
	}
	return s.mcpServer(who).Run(ctx, t)
}
