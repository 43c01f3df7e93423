package main

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/app"
)

// cmdMCP serves the MCP tools over stdin and stdout to one local client
// (an editor's assistant started with this command), acting for the user
// of WAYMARK_TOKEN; its own workers carry out the tours' turns unless
// --workers 0 leaves them to a waymark serve or worker on the same database.
// Beside TYPO3 (--typo3) the user, her rights and the site are TYPO3's, as
// in serve. Logs go to stderr: stdout carries the protocol.
func cmdMCP(ctx context.Context, e *env, args []string) error {
	f := newFlags("mcp", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	if f.Token == "" {
		return fmt.Errorf("%w: WAYMARK_TOKEN must hold the API token of the user to act for (waymark token USERNAME prints one)", errUsage)
	}
	workers, chats, err := queueWorkers(f, 0)
	if err != nil {
		return err
	}
	in, err := f.openInstallation(ctx)
	if err != nil {
		return err
	}
	defer in.Close()
	cfg := f.appConfig(e, in)
	cfg.Workers, cfg.ChatWorkers = workers, chats
	a, err := app.New(ctx, in.DB, cfg)
	if err != nil {
		return err
	}
	err = a.Run(ctx, app.RunConfig{Serve: func(ctx context.Context) error {
		err := a.MCP.ServeStdio(ctx, &sdk.StdioTransport{}, a.Server.Auth(), f.Token)
		if errors.Is(err, context.Canceled) {
			return nil // the signal: a normal end
		}
		return err
	}})
	return err
}
