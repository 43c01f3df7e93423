package agent

import (
	"context"
	"strings"
	"sync"

	"waymark/internal/llm"
)

// modelCall is a model call under way in this process: the reply as it has
// streamed in so far (what the chat shows live) and how to cut the call
// short when its run is cancelled here (CutShort), instead of at the next
// heartbeat.
type modelCall struct {
	mu     sync.Mutex
	text   strings.Builder
	cancel context.CancelFunc
}

// Draft is the text of the model's reply to run id as it streams in, while
// a call of that run is under way in this process ("" otherwise, also when
// the provider does not stream). A run driven by another process shows none.
func (rt *Driver) Draft(id string) string {
	v, ok := rt.calls.Load(id)
	if !ok {
		return ""
	}
	c := v.(*modelCall)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.text.String()
}

// callModel runs provider.Complete for the segment's run under ctx, keeping
// the streamed text (req.OnDelta, when the runtime streams) for Draft and
// registering the call so that CutShort can end it. The draft ends with the call: the reply's text is then in the
// run's events and, once the turn ends, in the transcript.
func (rt *Driver) callModel(ctx context.Context, id string, provider llm.Provider, req llm.Request) (llm.Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &modelCall{cancel: cancel}
	if req.OnDelta != nil {
		req.OnDelta = func(d llm.Delta) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if d.Restart {
				c.text.Reset() // a dropped attempt is retried: its text is void
			}
			c.text.WriteString(d.Content)
		}
	}
	rt.calls.Store(id, c)
	defer rt.calls.CompareAndDelete(id, c)
	return provider.Complete(ctx, req)
}

// CutShort cancels the model call of run id under way in this process, if
// any, once its run was cancelled: the segment stops at once instead of at
// its next heartbeat. The caller cuts after it has recorded the cancel's
// consequence (the chat's stopped turn), so the segment's ending finds it.
func (rt *Driver) CutShort(id string) {
	if v, ok := rt.calls.Load(id); ok {
		v.(*modelCall).cancel()
	}
}
