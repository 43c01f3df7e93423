package mcp

import (
	"context"
	"errors"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/httpapi"
)

// methodDiscover is protocol 2026-07-28's probe of what a server speaks.
const methodDiscover = "server/discover"

// receiving is the middleware every request passes through on its way to
// the SDK's handlers.
//
//   - tools/call: arguments with text the database cannot store are refused
//     as the JSON API refuses such a body (invalid_text), before any tool
//     sees them; the SDK's own refusal of arguments that do not match the
//     tool's input schema is answered with the stable code bad_request.
//   - resources/read: a URI of no resource answers -32002, as one of another
//     user does.
//   - resources/list: the user's conversations are listed (a resource
//     template alone lists nothing).
//   - server/discover (protocol 2026-07-28's probe): answered as a server of
//     the initialize handshake answers it — method not found —, so a client
//     that tries the newer protocol first falls back to initialize. Waymark
//     keeps sessions (a form's answer, a subscription), which 2026-07-28's
//     stateless core has none of.
func (s *Server) receiving(who whoFunc) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == methodDiscover {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + methodDiscover + " (this server speaks the initialize handshake, up to 2025-11-25)"}
			}
			switch r := req.(type) {
			case *sdk.CallToolRequest:
				if r.Params != nil {
					if err := httpapi.CheckJSONText(r.Params.Arguments); err != nil {
						return s.errorResult(ctx, r, err), nil
					}
				}
				res, err := next(ctx, method, req)
				if tr, ok := res.(*sdk.CallToolResult); ok && err == nil && tr.IsError && tr.StructuredContent == nil {
					// Only the SDK answers an error without structured
					// content: the arguments did not fit the tool.
					return s.errorResult(ctx, r, errInvalid.With("arguments: %s", text(tr))), nil
				}
				return res, err
			case *sdk.ReadResourceRequest:
				res, err := next(ctx, method, req)
				if je := (*jsonrpc.Error)(nil); errors.As(err, &je) && je.Message == "Resource not found" && r.Params != nil {
					err = resourceNotFound(r.Params.URI) // an URI no template matches: the SDK's own answer
				}
				return res, err
			case *sdk.ListResourcesRequest:
				res, err := next(ctx, method, req)
				lr, ok := res.(*sdk.ListResourcesResult)
				if err != nil || !ok || (r.Params != nil && r.Params.Cursor != "") {
					return res, err
				}
				a, err := who(ctx, r.Extra)
				if err != nil {
					return nil, err
				}
				list, err := s.d.Chat.List(ctx, a.UID)
				if err != nil {
					return nil, err
				}
				for _, v := range list {
					title := "Conversation " + strconv.FormatInt(v.ID, 10)
					if v.Tour != nil {
						title += ": " + v.Tour.PageTitle + " (" + v.Tour.LanguageName + ")"
					}
					lr.Resources = append(lr.Resources, &sdk.Resource{URI: conversationURI + strconv.FormatInt(v.ID, 10),
						Name: "conversation-" + strconv.FormatInt(v.ID, 10), Title: title, MIMEType: "application/json"})
				}
				return lr, nil
			}
			return next(ctx, method, req)
		}
	}
}

// text is the text content of a tool result.
func text(r *sdk.CallToolResult) string {
	var b []byte
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b = append(b, t.Text...)
		}
	}
	return string(b)
}
