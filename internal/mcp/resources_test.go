package mcp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// Each conversation is a resource its user may read and subscribe to; a
// change sends notifications/resources/updated. Another user's reads and
// subscribes like a missing one.
func TestConversationIsAResourceWhoseChangesAreNotified(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := tourEnvOn(t, db)
		updated := make(chan string, 16)
		c := sdk.NewClient(&sdk.Implementation{Name: "resources-test", Version: "1"}, &sdk.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
				select {
				case updated <- req.Params.URI:
				default:
				}
			}})
		cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: e.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: wt.Erika}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
			t.Fatalf("the server does not offer resource subscriptions: %+v", caps.Resources)
		}
		v := view(t, "start_tour", call(t, cs, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"}))
		uri := "waymark://conversations/" + itoa(v.ID)
		res, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, v.Card.TurnDigest) || res.Contents[0].MIMEType != "application/json" {
			t.Fatalf("read %s = %+v, want the conversation with its card", uri, res.Contents)
		}
		if err := cs.Subscribe(t.Context(), &sdk.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		call(t, cs, "answer_card", map[string]any{"conversation": v.ID, "turnDigest": v.Card.TurnDigest, "answer": "apply"})
		select {
		case got := <-updated:
			if got != uri {
				t.Errorf("updated %s, want %s", got, uri)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no notifications/resources/updated within 10 s of answering the card")
		}

		otto := connect(t, e, wt.Otto, nil)
		for _, u := range []string{uri, "waymark://conversations/99999", "waymark://conversations/x"} {
			if _, err := otto.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: u}); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Errorf("otto reads %s: %v, want not found", u, err)
			}
		}
		if err := otto.Subscribe(t.Context(), &sdk.SubscribeParams{URI: uri}); err == nil {
			t.Errorf("otto subscribed to erika's conversation")
		}
	})
}
