package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/chat"
)

// conversationURI is the prefix of a conversation's resource URI.
const conversationURI = "waymark://conversations/"

// addResources registers the conversations as a resource template: each
// conversation of the user is readable as waymark://conversations/{id}
// (the JSON API's Conversation); another user's reads like a missing one.
func (s *Server) addResources(srv *sdk.Server, who whoFunc) {
	srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "conversation", Title: "Conversation", URITemplate: conversationURI + "{id}",
		MIMEType: "application/json", Description: "A conversation of the user: its status, messages, card or question, outcomes and summary. Subscribe to hear of each change."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			v, err := s.readConversation(ctx, who, req.Extra, req.Params.URI)
			if err != nil {
				return nil, err
			}
			raw, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(raw)}}}, nil
		})
}

// readConversation reads the conversation a URI names as the request's
// user; unknown, foreign and malformed URIs answer alike (resource not found).
func (s *Server) readConversation(ctx context.Context, who whoFunc, extra *sdk.RequestExtra, uri string) (chat.View, error) {
	a, err := who(ctx, extra)
	if err != nil {
		return chat.View{}, err
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(uri, conversationURI), 10, 64)
	if !strings.HasPrefix(uri, conversationURI) || err != nil || id <= 0 {
		return chat.View{}, resourceNotFound(uri)
	}
	v, err := s.d.Chat.Get(ctx, a.UID, id)
	if errors.Is(err, chat.ErrNotFound) {
		return chat.View{}, resourceNotFound(uri)
	}
	return v, err
}

// codeResourceNotFound is the code of a resource that is not there in the
// protocol versions Waymark speaks (up to 2025-11-25); the SDK answers
// -32602 (invalid params), as 2026-07-28 does.
const codeResourceNotFound = -32002

// resourceNotFound answers a resource that is not there, or not the user's.
func resourceNotFound(uri string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: codeResourceNotFound, Message: "Resource not found", Data: data}
}

// subscription is one session's subscription to one conversation.
type subscription struct {
	session *sdk.ServerSession
	uri     string
}

// subscribe starts watching the conversation for the session: each change
// (WaitChange: this process's commits at once, others' within its check)
// sends notifications/resources/updated. The watch ends on unsubscribe or
// when the session closes.
func (s *Server) subscribe(ctx context.Context, srv *sdk.Server, who whoFunc, req *sdk.SubscribeRequest) error {
	v, err := s.readConversation(ctx, who, req.Extra, req.Params.URI)
	if err != nil {
		return err
	}
	a, err := who(ctx, req.Extra)
	if err != nil {
		return err
	}
	key := subscription{session: req.Session, uri: req.Params.URI}
	ctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.mu.Lock()
	if _, ok := s.subs[key]; ok {
		s.mu.Unlock()
		stop()
		return nil // already watched
	}
	w := &watch{stop: stop}
	s.subs[key] = w
	s.mu.Unlock()
	go func() { // ends the watch with the session
		_ = req.Session.Wait()
		s.endWatch(key, w)
	}()
	go func() {
		defer s.endWatch(key, w)
		last := v.UpdatedAt
		for ctx.Err() == nil {
			next, err := s.d.Chat.WaitChange(ctx, a.UID, v.ID, last, chat.MaxWait, ctx.Done())
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("mcp: watching a subscribed conversation", "uri", key.uri, "err", err)
				}
				return
			}
			if next.UpdatedAt.Equal(last) {
				continue
			}
			last = next.UpdatedAt
			if err := srv.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: key.uri}); err != nil {
				s.log.Debug("mcp: resource update not sent", "uri", key.uri, "err", err)
			}
		}
	}()
	return nil
}

// watch is the running watch of one subscription.
type watch struct{ stop func() }

func (s *Server) unsubscribe(_ context.Context, req *sdk.UnsubscribeRequest) error {
	key := subscription{session: req.Session, uri: req.Params.URI}
	s.mu.Lock()
	w := s.subs[key]
	s.mu.Unlock()
	if w != nil {
		s.endWatch(key, w)
	}
	return nil
}

// endWatch stops the watch w of a subscription; a newer watch of the same
// subscription stays.
func (s *Server) endWatch(key subscription, w *watch) {
	s.mu.Lock()
	if s.subs[key] == w {
		delete(s.subs, key)
	}
	s.mu.Unlock()
	w.stop()
}
