package bench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxCards bounds the cards one tour answers before it ends the tour.
const maxCards = 10

// Result is what the conversations of a Drive did.
type Result struct {
	Tours, Answers int
	// Withdrawn counts the cards a new message withdrew (Mix.Withdraw),
	// EndedEarly the tours ended with a card open (Mix.End).
	Withdrawn, EndedEarly int
	// FailedConversations counts the tours whose conversation ended failed
	// (Mix.TolerateFailed): a run the reaper dead-lettered after a crash.
	FailedConversations int
	Latencies           []time.Duration // one per answered card: answer sent → next card or idle, sorted
	Elapsed             time.Duration
	Failed              int
	// Unavailable counts the answers 503 with Retry-After that a request got
	// and was sent again after (Mix.RetryUnavailable); Internal the 500s.
	Unavailable, Internal int
	Unfinished            int   // tours cut off after the grace time
	Err                   error // the first failure
}

// Mix makes tours erratic, for the proofs; the zero value is the bench's
// tour (answer every card, end after the closing answer).
type Mix struct {
	// At each card, End is the chance of ending the tour with the card open,
	// Withdraw the chance of sending a new message instead of an answer
	// (which withdraws the card, P.X2).
	End, Withdraw float64
	// TolerateFailed counts a tour whose conversation failed (a turn the
	// reaper dead-lettered) and starts the next one, instead of failing.
	TolerateFailed bool
	// Settle bounds the wait for a turn to settle (default a minute).
	Settle time.Duration
	// Stop, when closed, starts no more tours (the duration still bounds them).
	Stop <-chan struct{}
	// Grace is how long tours under way when the duration has passed get to
	// end (default as long as the duration, at least 10 s).
	Grace time.Duration
	// RetryUnavailable sends a request answered 503 with Retry-After again
	// after the wait it names (a well-behaved client through a database
	// outage), for at most Settle; without it a 503 fails the tour.
	RetryUnavailable bool
	// OnAnswer, when set, is called with each card answer once the server
	// accepted it, on the conversation's goroutine (it must not block).
	OnAnswer func(answer string)
	// OnSettle, when set, is called for each answered card with the time the
	// answer was sent and the time its conversation settled (the next card
	// or idle): how long the conversation was busy after the answer.
	OnSettle func(sent, settled time.Time)
}

// stopped reports whether m.Stop is closed.
func (m Mix) stopped() bool {
	select {
	case <-m.Stop:
		return true
	default:
		return false
	}
}

// drive runs a conversation for each editor's token, each starting tours one after the other until
// d has passed, and waits for the tours under way to end.
func drive(ctx context.Context, client *http.Client, base string, tokens []string, d time.Duration, mix Mix) Result {
	n := len(tokens)
	var (
		mu  sync.Mutex // guards res
		res Result
		wg  sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	// Tours under way at the deadline get as long again (at least 10 s) to
	// end; those still running then are cut off and counted as unfinished.
	ctx, cancel := context.WithDeadline(ctx, deadline.Add(cmp.Or(mix.Grace, max(d, 10*time.Second))))
	defer cancel()
	for i := range n {
		wg.Go(func() {
			u := &user{client: client, base: base, token: tokens[i], page: firstPage + i, mix: mix,
				settleLimit: max(time.Minute, time.Duration(n)*200*time.Millisecond),
				rng:         rand.New(rand.NewPCG(uint64(i), uint64(start.UnixNano())))}
			for time.Now().Before(deadline) && ctx.Err() == nil && !mix.stopped() {
				t, err := u.tour(ctx)
				mu.Lock()
				res.Answers += len(t.latencies)
				res.Latencies = append(res.Latencies, t.latencies...)
				res.Withdrawn += t.withdrawn
				res.Unavailable += u.unavailable
				res.Internal += u.internal
				u.unavailable, u.internal = 0, 0
				switch {
				case err != nil && ctx.Err() != nil:
					res.Unfinished++
				case err != nil:
					res.Failed++
					if res.Err == nil {
						res.Err = err
					}
				case t.failed:
					res.FailedConversations++
				default:
					res.Tours++
					if t.early {
						res.EndedEarly++
					}
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	slices.Sort(res.Latencies)
	return res
}

// user is one editor's client.
type user struct {
	client *http.Client
	base   string
	token  string
	page   int
	rng    *rand.Rand
	mix    Mix
	// settleLimit is the default of Mix.Settle: a minute, or 200 ms per
	// conversation beyond 300 — with 500 at once on the loaded 2-core
	// machine an answer waited behind all the others' turns for minutes.
	settleLimit time.Duration
	// unavailable and internal count the 503 and 500 answers since the
	// last tour was added to the result (Result.Unavailable, Internal).
	unavailable, internal int
}

// conversation is the part of a Conversation the driver reads.
type conversation struct {
	ID        int64  `json:"id"`
	Status    string `json:"status"`
	Error     string `json:"error"`
	UpdatedAt string `json:"updatedAt"` // as sent: the after of a wait
	Card      *struct {
		TurnDigest string   `json:"turnDigest"`
		Answers    []string `json:"answers"`
	} `json:"card"`
}

// tourResult is what one tour did.
type tourResult struct {
	latencies []time.Duration
	withdrawn int
	early     bool // ended with a card open
	failed    bool // the conversation failed (tolerated)
}

// tour runs one guided tour: start, a first message, a random answer to
// every card (or, as u.mix has it, a new message or the end instead), end.
func (u *user) tour(ctx context.Context) (tourResult, error) {
	var t tourResult
	var c conversation
	if err := u.do(ctx, "POST", "/api/conversations", map[string]any{"page": u.page, "language": 0, "skill": skillUID}, http.StatusCreated, &c); err != nil {
		return t, err
	}
	path := "/api/conversations/" + strconv.FormatInt(c.ID, 10)
	message := func(text string) (conversation, error) {
		var c conversation
		err := u.do(ctx, "POST", path+"/messages", map[string]any{"content": text}, http.StatusAccepted, &c)
		return c, err
	}
	c, err := message(fmt.Sprintf("Please improve page %d.", u.page))
	if err != nil {
		return t, err
	}
	if c, err = u.settled(ctx, path, c); err != nil {
		return t, err
	}
	for c.Card != nil && len(t.latencies)+t.withdrawn < maxCards {
		var offered []string
		for _, a := range c.Card.Answers {
			switch a {
			case "apply", "variant", "skip", "keep":
				offered = append(offered, a)
			}
		}
		if len(offered) == 0 {
			return t, fmt.Errorf("conversation %d: a card without process answers: %v", c.ID, c.Card.Answers)
		}
		switch p := u.rng.Float64(); {
		case p < u.mix.End:
			t.early = true
			return t, u.do(ctx, "POST", path+"/end-tour", nil, http.StatusOK, nil)
		case p < u.mix.End+u.mix.Withdraw:
			if c, err = message(fmt.Sprintf("Rather something else on page %d.", u.page)); err != nil {
				return t, err
			}
			t.withdrawn++
			if c, err = u.settled(ctx, path, c); err != nil {
				return t, err
			}
			continue
		}
		t0 := time.Now()
		answer := offered[u.rng.IntN(len(offered))]
		seen := c
		if err := u.do(ctx, "POST", path+"/answer", map[string]any{"turnDigest": c.Card.TurnDigest, "answer": answer}, http.StatusAccepted, &c); err != nil {
			return t, fmt.Errorf("%s to card %s of the conversation as read at %s (%s): %w", answer, seen.Card.TurnDigest, seen.UpdatedAt, seen.Status, err)
		}
		if u.mix.OnAnswer != nil {
			u.mix.OnAnswer(answer)
		}
		if c, err = u.settled(ctx, path, c); err != nil {
			return t, err
		}
		t.latencies = append(t.latencies, time.Since(t0))
		if u.mix.OnSettle != nil {
			u.mix.OnSettle(t0, time.Now())
		}
	}
	if c.Status == "failed" {
		if u.mix.TolerateFailed {
			t.failed = true
			return t, nil
		}
		return t, fmt.Errorf("conversation %d failed: %s", c.ID, c.Error)
	}
	return t, u.do(ctx, "POST", path+"/end-tour", nil, http.StatusOK, nil)
}

// waitStep is the longest single wait of settled (the server's bound is
// chat.MaxWait): a wait answers at the conversation's next change anyway.
const waitStep = 10 * time.Second

// settled waits until no turn is under way on the conversation, c as the
// last request answered it: while it is processing, it asks the server to
// answer at its next change (GET …?wait=&after=updatedAt) — no polling —
// for at most Mix.Settle (default u.settleLimit).
func (u *user) settled(ctx context.Context, path string, c conversation) (conversation, error) {
	limit := cmp.Or(u.mix.Settle, u.settleLimit)
	deadline := time.Now().Add(limit)
	for c.Status == "processing" {
		left := time.Until(deadline)
		if left <= 0 {
			return c, fmt.Errorf("%s still processing after %v", path, limit)
		}
		wait := min(waitStep, max(left, time.Millisecond)).Round(time.Millisecond)
		q := url.Values{"wait": {wait.String()}, "after": {c.UpdatedAt}}
		if err := u.do(ctx, "GET", path+"?"+q.Encode(), nil, http.StatusOK, &c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// do sends one API request as the user and decodes the answer into out.
// With Mix.RetryUnavailable a 503 with Retry-After is sent again after the
// wait it names, for at most Mix.Settle.
func (u *user) do(ctx context.Context, method, path string, body any, want int, out any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(cmp.Or(u.mix.Settle, u.settleLimit))
	retried := false
	for {
		status, wait, answer, err := u.send(ctx, method, path, raw)
		if err != nil {
			return err
		}
		switch status {
		case http.StatusInternalServerError:
			u.internal++
		case http.StatusServiceUnavailable:
			u.unavailable++
			if u.mix.RetryUnavailable && wait > 0 && time.Now().Add(wait).Before(deadline) {
				select {
				case <-time.After(wait):
					retried = true
					continue
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		case http.StatusConflict:
			// A 503 does not say whether the write landed: a repeated
			// message or answer that is refused as busy or stale reads the
			// conversation and goes on from it, as a client would. An
			// answer that did not land shows as a lost outcome.
			if retried && method == "POST" && strings.Count(path, "/") == 4 {
				return u.do(ctx, "GET", path[:strings.LastIndexByte(path, '/')], nil, http.StatusOK, out)
			}
		}
		return u.check(ctx, method, path, status, want, answer, out)
	}
}

// send sends one request and returns the status, the wait a Retry-After
// names and the body.
func (u *user) send(ctx context.Context, method, path string, body []byte) (int, time.Duration, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.base+path, rd)
	if err != nil {
		return 0, 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+u.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	var wait time.Duration
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		wait = time.Duration(secs) * time.Second
	}
	return resp.StatusCode, wait, raw, nil
}

// check turns an answer of status with body raw into do's result.
func (u *user) check(ctx context.Context, method, path string, status, want int, raw []byte, out any) error {
	if status != want {
		err := fmt.Errorf("%s %s = %d, want %d: %s", method, path, status, want, bytes.TrimSpace(raw))
		if status == http.StatusConflict && method == "POST" {
			err = fmt.Errorf("%w; %s", err, u.now(ctx, path))
		}
		return err
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return nil
}

// now reads the conversation a refused POST to path (…/messages,
// …/answer) was sent to, for the error: what the server shows right after
// the refusal.
func (u *user) now(ctx context.Context, path string) string {
	conv := path[:strings.LastIndexByte(path, '/')]
	var v json.RawMessage
	if err := u.do(ctx, "GET", conv, nil, http.StatusOK, &v); err != nil {
		return "then " + err.Error()
	}
	return fmt.Sprintf("then GET %s = 200: %s", conv, v)
}

// quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
