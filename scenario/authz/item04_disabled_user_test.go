package authz_test

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// openStream opens an event stream as token and returns a channel that is
// closed when the server ends it; it fails the test unless the stream opens
// with 200 and a first event.
func openStream(t *testing.T, e *wt.Env, token, path string) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", e.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream %s = %d", path, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "data:") {
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer resp.Body.Close()
		for sc.Scan() {
		}
	}()
	return ended
}

// waitEnded fails unless the stream ends before the deadline (many polls).
func waitEnded(t *testing.T, what string, ended <-chan struct{}) {
	t.Helper()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Errorf("%s did not end", what)
	}
}

// A disabled user is out everywhere at once: their open run and
// conversation streams (and the inbox stream of the screens) end within a
// poll.
func TestDisabledUserOpenStreamsEnd(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		st := waitingRun(t, e, e.As(erika), 1, "1")
		conv := wt.Decode[wt.Conversation](t, e.As(erika).Must("POST", "/api/conversations", map[string]any{"page": 1, "language": 0}, http.StatusCreated))
		cid := float64(conv.ID)
		runStream := openStream(t, e, erika, "/api/runs/"+st.UUID+"/events")
		convStream := openStream(t, e, erika, "/api/conversations/"+itoa(cid)+"/stream")
		inboxStream := openStream(t, e, erika, "/api/inbox/stream")
		exec(t, db, "UPDATE be_users SET disabled = TRUE WHERE uid = 2")
		waitEnded(t, "the run stream", runStream)
		waitEnded(t, "the conversation stream", convStream)
		waitEnded(t, "the inbox stream", inboxStream)
		if r := e.As(erika).Do("GET", "/api/me", nil); r.Status != http.StatusUnauthorized {
			t.Errorf("a disabled user's request = %d %s, want 401", r.Status, r.Body)
		}
	})
}

// A deleted token is refused at once, not after a cache minute, and so is
// an open stream authenticated by it.
func TestDeletedTokenIsRefusedAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		conv := wt.Decode[wt.Conversation](t, e.As(bernd).Must("POST", "/api/conversations", map[string]any{"page": 50, "language": 1}, http.StatusCreated))
		stream := openStream(t, e, bernd, "/api/conversations/"+itoa(float64(conv.ID))+"/stream")
		e.As(bernd).Must("GET", "/api/me", nil, http.StatusOK) // the token is verified and remembered
		exec(t, db, "DELETE FROM api_tokens WHERE user_uid = 4")
		if r := e.As(bernd).Do("GET", "/api/me", nil); r.Status != http.StatusUnauthorized {
			t.Errorf("the deleted token = %d %s, want 401 at once", r.Status, r.Body)
		}
		waitEnded(t, "the stream of the deleted token", stream)
		e.As(erika).Must("GET", "/api/me", nil, http.StatusOK) // other tokens still work
	})
}

func itoa(f float64) string { return strconv.FormatInt(int64(f), 10) }
