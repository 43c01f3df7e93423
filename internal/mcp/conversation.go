package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/access"
	"waymark/internal/chat"
	"waymark/internal/fault"
	"waymark/internal/httpapi"
)

// errInvalid answers tool arguments the services never see (a limit out of range).
var errInvalid = fault.New(fault.Invalid, "bad_request", "bad request")

// carryOn reads the conversation once its turn or decision has paused or
// ended; with a client that elicits, it goes on asking each card and
// question of the user until the tour needs nothing from them or ends.
func (s *Server) carryOn(ctx context.Context, req *sdk.CallToolRequest, a *access.Actor, id int64) (result, error) {
	v, err := s.d.Chat.Get(ctx, a.UID, id)
	if err != nil {
		return result{}, err
	}
	p := newProgress(req)
	if v, err = s.settleView(ctx, p, a, v); err != nil {
		return result{}, err
	}
	if elicits(req) {
		return s.elicit(ctx, req, p, a, v)
	}
	return s.viewResult(a, v), nil
}

// progress sends the progress notifications of one tool call, increasing,
// when the call asked for them (a progress token).
type progress struct {
	req   *sdk.CallToolRequest
	token any
	mu    sync.Mutex // guards step
	step  float64
}

func newProgress(req *sdk.CallToolRequest) *progress {
	return &progress{req: req, token: req.Params.GetProgressToken()}
}

// notify sends the next progress notification; a lost one costs the client
// only a progress line.
func (p *progress) notify(ctx context.Context, msg string) {
	if p.token == nil {
		return
	}
	p.mu.Lock()
	p.step++
	step := p.step
	p.mu.Unlock()
	_ = p.req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: p.token, Progress: step, Message: msg})
}

// settleView waits while the conversation is processing, at most
// Config.Settle, sending a progress notification on each change when the
// client asked for them (a progress token).
func (s *Server) settleView(ctx context.Context, p *progress, a *access.Actor, v chat.View) (chat.View, error) {
	deadline := time.Now().Add(s.settle)
	for v.Status == chat.Processing {
		left := time.Until(deadline)
		if left <= 0 {
			return v, nil
		}
		next, err := s.d.Chat.WaitChange(ctx, a.UID, v.ID, v.UpdatedAt, min(left, chat.MaxWait), nil)
		if err != nil {
			return v, err
		}
		if !next.UpdatedAt.Equal(v.UpdatedAt) {
			p.notify(ctx, progressText(next))
		}
		v = next
	}
	return v, nil
}

// progressText is a progress notification's message: the process's own
// progress (set_progress) when it reported one.
func progressText(v chat.View) string {
	var p struct {
		Current int    `json:"current"`
		Total   int    `json:"total"`
		Label   string `json:"label"`
	}
	if len(v.Progress) > 0 && json.Unmarshal(v.Progress, &p) == nil && p.Total > 0 {
		return fmt.Sprintf("step %d of %d %s", p.Current, p.Total, p.Label)
	}
	return string(v.Status)
}

// viewResult is a conversation as a tool's answer.
func (s *Server) viewResult(a *access.Actor, v chat.View) result {
	return result{data: v, text: viewText(a, v)}
}

// errorResult is a refusal as a tool error: the API's stable code and its
// safe message; an internal error is logged and answered without detail.
func (s *Server) errorResult(ctx context.Context, req *sdk.CallToolRequest, err error) *sdk.CallToolResult {
	status, code := httpapi.Classify(err)
	msg := "internal error"
	if f, m, ok := fault.Of(err); ok && f.Kind() != fault.Internal {
		msg = m
	}
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		// The client cancelled the call (notifications/cancelled, its
		// request timeout): nobody reads the answer, and nothing failed.
		s.log.InfoContext(ctx, "mcp tool call cancelled by the client", "tool", req.Params.Name)
	case status >= 500:
		s.log.ErrorContext(ctx, "mcp tool failed", "tool", req.Params.Name, "err", err)
	default:
		s.log.DebugContext(ctx, "mcp tool refused", "tool", req.Params.Name, "code", code, "err", err)
	}
	body := map[string]any{"code": code, "message": msg}
	text := code + ": " + msg
	if m := (*madeError)(nil); errors.As(err, &m) {
		body["conversation"] = m.conversation
		text = fmt.Sprintf("%s (conversation %d was made: read it with get_conversation, go on with resume_tour)", text, m.conversation)
	}
	return &sdk.CallToolResult{
		IsError:           true,
		Content:           []sdk.Content{&sdk.TextContent{Text: text}},
		StructuredContent: map[string]any{"error": body},
	}
}
