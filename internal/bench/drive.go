package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// maxCards bounds the cards one tour answers before it ends the tour.
const maxCards = 10

// result is what the conversations did; mu in drive guards it while they run.
type result struct {
	tours, answers int
	latencies      []time.Duration // one per answered card: answer sent → next card or idle
	elapsed        time.Duration
	failed         int
	unfinished     int   // tours cut off after the grace time
	err            error // the first failure
}

// drive runs n conversations, each starting tours one after the other until
// d has passed, and waits for the tours under way to end.
func drive(ctx context.Context, client *http.Client, base string, n int, d time.Duration) result {
	var (
		mu  sync.Mutex // guards res
		res result
		wg  sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	// Tours under way at the deadline get as long again (at least 10 s) to
	// end; those still running then are cut off and counted as unfinished.
	ctx, cancel := context.WithDeadline(ctx, deadline.Add(max(d, 10*time.Second)))
	defer cancel()
	for i := range n {
		wg.Go(func() {
			u := &user{client: client, base: base, token: token(i), page: firstPage + i,
				rng: rand.New(rand.NewPCG(uint64(i), uint64(start.UnixNano()))), maxPoll: maxPoll(n)}
			for time.Now().Before(deadline) && ctx.Err() == nil {
				lat, err := u.tour(ctx)
				mu.Lock()
				res.answers += len(lat)
				res.latencies = append(res.latencies, lat...)
				switch {
				case err != nil && ctx.Err() != nil:
					res.unfinished++
				case err != nil:
					res.failed++
					if res.err == nil {
						res.err = err
					}
				default:
					res.tours++
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	slices.Sort(res.latencies)
	return res
}

// user is one editor's client.
type user struct {
	client  *http.Client
	base    string
	token   string
	page    int
	rng     *rand.Rand
	maxPoll time.Duration
}

// conversation is the part of a Conversation the driver reads.
type conversation struct {
	ID     int64  `json:"id"`
	Status string `json:"status"`
	Error  string `json:"error"`
	Card   *struct {
		TurnDigest string   `json:"turnDigest"`
		Answers    []string `json:"answers"`
	} `json:"card"`
}

// tour runs one guided tour: start, a first message, a random answer to
// every card, end; it returns the answer latencies.
func (u *user) tour(ctx context.Context) ([]time.Duration, error) {
	var c conversation
	if err := u.do(ctx, "POST", "/api/conversations", map[string]any{"page": u.page, "language": 0, "skill": skillUID}, http.StatusCreated, &c); err != nil {
		return nil, err
	}
	path := "/api/conversations/" + strconv.FormatInt(c.ID, 10)
	if err := u.do(ctx, "POST", path+"/messages", map[string]any{"content": fmt.Sprintf("Please improve page %d.", u.page)}, http.StatusAccepted, nil); err != nil {
		return nil, err
	}
	c, err := u.settled(ctx, path)
	if err != nil {
		return nil, err
	}
	var lat []time.Duration
	for c.Card != nil && len(lat) < maxCards {
		var offered []string
		for _, a := range c.Card.Answers {
			switch a {
			case "apply", "variant", "skip", "keep":
				offered = append(offered, a)
			}
		}
		if len(offered) == 0 {
			return lat, fmt.Errorf("conversation %d: a card without process answers: %v", c.ID, c.Card.Answers)
		}
		t0 := time.Now()
		answer := offered[u.rng.IntN(len(offered))]
		if err := u.do(ctx, "POST", path+"/answer", map[string]any{"turnDigest": c.Card.TurnDigest, "answer": answer}, http.StatusAccepted, nil); err != nil {
			return lat, err
		}
		if c, err = u.settled(ctx, path); err != nil {
			return lat, err
		}
		lat = append(lat, time.Since(t0))
	}
	if c.Status == "failed" {
		return lat, fmt.Errorf("conversation %d failed: %s", c.ID, c.Error)
	}
	return lat, u.do(ctx, "POST", path+"/end-tour", nil, http.StatusOK, nil)
}

// maxPoll caps the wait between two reads of a conversation whose turn is
// under way: a latency reads up to this much high, and the reads cost the
// server CPU (at 16 ms the cap, not the server, was most of a 40 ms answer).
// With many conversations the cap grows so that all of them together read
// at most about 2,000 times a second.
func maxPoll(conversations int) time.Duration {
	return max(4*time.Millisecond, time.Duration(conversations)*time.Second/2000)
}

// settled polls the conversation until no turn is under way, backing off
// from 1 ms to u.maxPoll, for at most a minute.
func (u *user) settled(ctx context.Context, path string) (conversation, error) {
	wait := time.Millisecond
	deadline := time.Now().Add(time.Minute)
	for {
		var c conversation
		if err := u.do(ctx, "GET", path, nil, http.StatusOK, &c); err != nil {
			return c, err
		}
		if c.Status != "processing" {
			return c, nil
		}
		if time.Now().After(deadline) {
			return c, fmt.Errorf("%s still processing after a minute", path)
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, u.maxPoll)
	}
}

// do sends one API request as the user and decodes the answer into out.
func (u *user) do(ctx context.Context, method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+u.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s = %d, want %d: %s", method, path, resp.StatusCode, want, bytes.TrimSpace(raw))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return nil
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
