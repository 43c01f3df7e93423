// Package waymarktest runs the whole Waymark application for tests: the
// real wiring of internal/app on a real database, a fixture, a scripted
// OpenAI-compatible server and an HTTP client per user. Scenario tests drive
// it through the HTTP API exactly as integrators do.
package waymarktest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"waymark/internal/access"
	"waymark/internal/app"
	"waymark/internal/auth"
	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/fixture"
	"waymark/internal/llm/llmtest"
	"waymark/internal/llm/openai"
	"waymark/internal/store"
	"waymark/internal/typo3"
	"waymark/internal/typo3/bridge"
	"waymark/internal/typo3/live"
)

// Env is one running application.
type Env struct {
	T   testing.TB
	DB  *store.DB
	App *app.App
	LLM *llmtest.Server // the scripted model server; add replies with LLM.Add
	URL string          // base URL of the HTTP API

	stopWorkers func()
}

// StopWorkers stops the application's workers, waiting for the jobs they
// run (a process that goes away); the HTTP API stays up.
func (e *Env) StopWorkers() { e.stopWorkers() }

// Options tune New.
type Options struct {
	Workers int // in-process run workers (0: none; call RunQueued yourself)
	// ChatWorkers is how many chat jobs (turns, decisions) the application
	// works at once (default 2).
	ChatWorkers int
	// APIOnly starts the application with no workers at all, as
	// `serve --workers 0`: another application on the same database works
	// its jobs.
	APIOnly bool
	// Clock, Lease and Heartbeat override the application's (crash tests).
	Clock     clock.Clock
	Lease     time.Duration
	Heartbeat time.Duration
	// PollInterval is how often idle workers look for jobs (default 20 ms);
	// on PostgreSQL they also wake on every insert.
	PollInterval time.Duration
	// ResumeWait bounds how long a decision's request waits for its worker
	// (0: the default).
	ResumeWait time.Duration
	// MCPFormWait and MCPFormProgress are app.Config's (0: the defaults).
	MCPFormWait, MCPFormProgress time.Duration
	// MaxOpenRuns caps each user's queued or waiting runs (0: the default).
	MaxOpenRuns int
	// SecureCookies marks the session cookie Secure (as behind a TLS proxy).
	SecureCookies bool
	// SkillsRoot is the folder directory skill sources must lie in ("": none).
	SkillsRoot string
	// ModelStream asks the model for streamed replies (app.Config.ModelStream).
	ModelStream bool
	// Tracer traces the application as app.Config.Tracer (nil: off).
	Tracer trace.Tracer
	// BeforeClaim runs in a conversation request right before its claim
	// (chat.Deps.BeforeClaim): where a test lands a concurrent request.
	BeforeClaim func(op string)
	// TYPO3 runs the application beside a TYPO3 installation
	// (app.Config.TYPO3); nil: the built-in source and directory.
	TYPO3 *live.TYPO3
	// Source and Directory are the application's content source and user
	// directory (app.Config.Source and Directory; nil: the built-in ones,
	// or TYPO3's with TYPO3).
	Source    content.Source
	Directory access.Directory
	// ShutdownTimeout is how long StopWorkers (and the test's end) lets
	// running jobs finish before it cancels them (default 5 s).
	ShutdownTimeout time.Duration
	// TYPO3Writer replaces the writer into TYPO3 that TYPO3 gives (app.Config.TYPO3Writer; needs TYPO3).
	TYPO3Writer *typo3.Writer
	// Bridge writes approved changes through the TYPO3 extension and takes
	// its tickets (app.Config.Bridge; needs TYPO3).
	Bridge *bridge.Client
	// PasswordLogin keeps password logins on beside the Bridge.
	PasswordLogin bool
	// Logger receives the application's log (nil: discarded).
	Logger *slog.Logger
}

// New starts the application on db with the fixture (YAML or JSON; the text
// {{LLM}} is replaced by the scripted server's base URL) and an HTTP server,
// all stopped when the test ends.
func New(t testing.TB, db *store.DB, fixtureText string, opts *Options) *Env {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	ctx := context.Background()
	srv := llmtest.NewServer(t)
	chatWorkers := cmp.Or(opts.ChatWorkers, 2)
	if opts.APIOnly {
		chatWorkers = 0
	}
	a, err := app.New(ctx, db, &app.Config{
		Key:          bytes.Repeat([]byte{7}, 32),
		Workers:      opts.Workers,
		ChatWorkers:  chatWorkers,
		Provider:     openai.Config{Backoff: func(int) time.Duration { return time.Millisecond }},
		PollInterval: cmp.Or(opts.PollInterval, 20*time.Millisecond),
		MaxOpenRuns:  opts.MaxOpenRuns,
		ResumeWait:   opts.ResumeWait,
		MCPFormWait:  opts.MCPFormWait, MCPFormProgress: opts.MCPFormProgress,
		Clock:         opts.Clock,
		Lease:         opts.Lease,
		Heartbeat:     opts.Heartbeat,
		ModelStream:   opts.ModelStream,
		SecureCookies: opts.SecureCookies,
		SkillsRoot:    opts.SkillsRoot,
		Tracer:        opts.Tracer,
		TYPO3:         opts.TYPO3,
		Source:        opts.Source,
		Directory:     opts.Directory,
		Bridge:        opts.Bridge,
		PasswordLogin: opts.PasswordLogin,
		Logger:        opts.Logger,
		HashCost:      auth.MinCost, // passwords and tokens of tests are not secrets; bcrypt's minimum keeps them fast
		Test:          app.TestConfig{BeforeClaim: opts.BeforeClaim, TYPO3Writer: opts.TYPO3Writer},
	})
	if err != nil {
		t.Fatalf("app: %v", err)
	}
	t.Cleanup(a.Close)
	if fixtureText != "" {
		text := strings.ReplaceAll(fixtureText, "{{LLM}}", srv.URL())
		if _, err := fixture.Import(ctx, db, []byte(text), "fixture.yaml", a.FixtureOptions()); err != nil {
			t.Fatalf("fixture: %v", err)
		}
	}
	env := &Env{T: t, DB: db, App: a, LLM: srv, stopWorkers: func() {}}
	if opts.Workers > 0 || chatWorkers > 0 {
		stop, err := a.StartWorkers(ctx, cmp.Or(opts.ShutdownTimeout, 5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		env.stopWorkers = func() { once.Do(stop) }
		t.Cleanup(env.stopWorkers)
	}
	hs := httptest.NewServer(a.Handler())
	t.Cleanup(hs.Close)
	env.URL = hs.URL
	return env
}

// Client is an API client acting as one user (by bearer token).
type Client struct {
	env   *Env
	token string
}

// As returns a client using token.
func (e *Env) As(token string) *Client { return &Client{env: e, token: token} }

// Response is an answer of the API.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it is not JSON.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("answer %d is not JSON: %v: %s", r.Status, err, r.Body)
	}
}

// Decode decodes the body of r into a T of the typed client (api.go),
// failing the test when it is not JSON: Decode[RunStatus](t, c.Must(…)).
func Decode[T any](t testing.TB, r Response) T {
	t.Helper()
	var v T
	r.JSON(t, &v)
	return v
}

// Map decodes the body as a JSON object.
func (r Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// ErrorCode is the code of an error answer ("" when there is none).
func (r Response) ErrorCode() string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &e)
	return e.Error.Code
}

// Do sends a request with body (nil, a string sent as is, or a value sent as JSON).
func (c *Client) Do(method, path string, body any) Response {
	c.env.T.Helper()
	return c.DoHeaders(method, path, body, nil)
}

// DoHeaders is Do with extra request headers. The answer must be complete
// within a minute (an event stream that does not end fails the test).
func (c *Client) DoHeaders(method, path string, body any, headers map[string]string) Response {
	t := c.env.T
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.env.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// Must sends a request and fails the test unless the answer has status want.
func (c *Client) Must(method, path string, body any, want int) Response {
	c.env.T.Helper()
	r := c.Do(method, path, body)
	if r.Status != want {
		c.env.T.Fatalf("%s %s = %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	return r
}
