package openai

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"waymark/internal/clock"
)

// Config configures a Provider.
type Config struct {
	// BaseURL of the API, including the version path, e.g.
	// "https://api.openai.com/v1" or "http://localhost:11434/v1". Required.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none. Secret.
	APIKey string
	// Model is used when a request names none.
	Model string
	// Timeout bounds one attempt, streaming included. Default 60s.
	Timeout time.Duration
	// MaxRetries is how many times a retryable failure is retried.
	// Default 3; negative means never retry.
	MaxRetries int
	// Backoff is the wait before retry attempt+1 (attempt counts from 0) when
	// the server named no Retry-After. Default: 500ms·2^attempt with jitter,
	// capped at 10s.
	Backoff func(attempt int) time.Duration
	// Sleep waits d or until ctx ends. Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// HTTPClient sends the requests. Default: openai-go's client.
	HTTPClient *http.Client
	// Clock reads the time for Retry-After dates. Default clock.Real.
	Clock clock.Clock
}

// maxRetryAfter caps the wait a server may ask for.
const maxRetryAfter = 60 * time.Second

func (c Config) withDefaults() (Config, error) {
	c.Timeout = cmp.Or(c.Timeout, 60*time.Second)
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = 3
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	if c.Backoff == nil {
		c.Backoff = DefaultBackoff
	}
	if c.Sleep == nil {
		c.Sleep = sleep
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.BaseURL == "" {
		return c, errors.New("openai: Config.BaseURL is required")
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, errors.New("openai: Config.BaseURL must be an http(s) URL like https://api.openai.com/v1")
	}
	if c.Timeout < 0 {
		return c, errors.New("openai: Config.Timeout must not be negative")
	}
	return c, nil
}

// DefaultBackoff waits 500ms·2^attempt, plus up to 25% jitter, capped at 10s.
func DefaultBackoff(attempt int) time.Duration {
	d := 10 * time.Second
	if attempt < 5 {
		d = min(d, 500*time.Millisecond<<attempt)
	}
	d += rand.N(d/4 + 1)
	return min(d, 10*time.Second)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryAfter reads the wait a response asks for: retry-after-ms, or
// Retry-After in seconds or as an HTTP date; capped at 60s. Zero when absent
// or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	var d time.Duration
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			d = time.Duration(min(ms, float64(maxRetryAfter/time.Millisecond)) * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); d == 0 && v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			if s > 0 {
				d = time.Duration(min(s, maxRetryAfter.Seconds()) * float64(time.Second))
			}
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now)
		}
	}
	return max(0, min(d, maxRetryAfter))
}
