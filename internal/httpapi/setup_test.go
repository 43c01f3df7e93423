package httpapi_test

import (
	"bytes"
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

	"waymark/internal/auth"
	"waymark/internal/clock"
	"waymark/internal/httpapi"
	"waymark/internal/store"
)

const (
	erikaToken = "wm_erika_token_0001" // uid 7, editor
	robotToken = "wm_robot_token_0001" // uid 8, service account
	maxToken   = "wm_max_token_000001" // uid 9, disabled
	adminToken = "wm_admin_token_0001" // uid 1, administrator
)

type bundle struct {
	db   *store.DB
	clk  *clock.Fake
	srv  *httpapi.Server
	h    http.Handler
	logs *syncBuffer
}

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newServer builds a server on db without seeding anything; each of with
// may change its configuration first.
func newServer(t *testing.T, db *store.DB, with ...func(*httpapi.Config)) bundle {
	t.Helper()
	logs := &syncBuffer{}
	clk := clock.NewFake(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	cfg := httpapi.Config{
		Logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Clock:    clk,
		Version:  "test",
		HashCost: auth.MinCost,
	}
	for _, f := range with {
		f(&cfg)
	}
	srv, err := httpapi.New(httpapi.Deps{DB: db}, &cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return bundle{db: db, clk: clk, srv: srv, h: srv.Handler(), logs: logs}
}

// setup builds a server and seeds: group 1 "Editors" (languages 0 and 1,
// mount 1, grant approve, subgroup 2), group 2 "Reviewers" (mount 5, grant
// skill_approve); erika (uid 7, password "erika-pw", group 1, backend
// language de); the service account robot (uid 8, password "robot-pw"); the
// disabled max (uid 9, password "max-pw"); the administrator admin (uid 1).
func setup(t *testing.T, db *store.DB, with ...func(*httpapi.Config)) bundle {
	t.Helper()
	b := newServer(t, db, with...)
	ctx := context.Background()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO be_groups (uid, title, languages, mounts, subgroups, grants) VALUES (1, 'Editors', '[0,1]', '[1]', '[2]', '["approve"]')`)
	exec(`INSERT INTO be_groups (uid, title, mounts, grants) VALUES (2, 'Reviewers', '[5]', '["skill_approve"]')`)
	users := []struct {
		uid             int64
		name, pw, token string
		admin, robot    bool
		disabled        bool
		groups, lang    string
	}{
		{7, "erika", "erika-pw", erikaToken, false, false, false, "[1]", "de"},
		{8, "robot", "robot-pw", robotToken, false, true, false, "[]", "en"},
		{9, "max", "max-pw", maxToken, false, false, true, "[1]", "en"},
		{1, "admin", "admin-pw", adminToken, true, false, false, "[]", "en"},
	}
	hashes := passwordHashes(t)
	for _, u := range users {
		h := hashes[u.pw]
		exec(`INSERT INTO be_users (uid, username, password_hash, admin, service_account, disabled, group_uids, backend_language)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, u.uid, u.name, h, u.admin, u.robot, u.disabled, u.groups, u.lang)
		if err := auth.PutTokenTx(ctx, db, u.uid, u.token, "test", b.clk.Now(), auth.MinCost); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// passwordHashes hashes the seed passwords once for the whole package: bcrypt
// is slow on purpose.
var passwordHashes = func() func(t *testing.T) map[string]string {
	var once sync.Once
	hashes := map[string]string{}
	var err error
	return func(t *testing.T) map[string]string {
		t.Helper()
		once.Do(func() {
			for _, pw := range []string{"erika-pw", "robot-pw", "max-pw", "admin-pw"} {
				if hashes[pw], err = auth.HashPassword(pw, auth.MinCost); err != nil {
					return
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return hashes
	}
}()

// call is one request to the server.
type call struct {
	method, path string
	body         string
	contentType  string // default application/json when body is set
	token        string
	cookie       *http.Cookie
	csrf         string
	requestID    string
	headers      map[string]string
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (b bundle) do(t *testing.T, c call) answer {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	r := httptest.NewRequest(c.method, c.path, body)
	if c.body != "" {
		ct := c.contentType
		if ct == "" {
			ct = "application/json"
		}
		r.Header.Set("Content-Type", ct)
	}
	if c.token != "" {
		r.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.cookie != nil {
		r.AddCookie(c.cookie)
	}
	if c.csrf != "" {
		r.Header.Set("X-CSRF-Token", c.csrf)
	}
	if c.requestID != "" {
		r.Header.Set("X-Request-Id", c.requestID)
	}
	for k, v := range c.headers {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	b.h.ServeHTTP(w, r)
	return answer{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

// wantError checks an error answer's status and code and returns its message.
func wantError(t *testing.T, what string, a answer, status int, code string) string {
	t.Helper()
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(a.body, &e); err != nil {
		t.Fatalf("%s: body %q is not error JSON: %v", what, a.body, err)
	}
	if a.status != status || e.Error.Code != code || e.Error.Message == "" {
		t.Errorf("%s = %d %q %q, want %d %q with a message", what, a.status, e.Error.Code, e.Error.Message, status, code)
	}
	return e.Error.Message
}

func decode[T any](t *testing.T, a answer) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(a.body, &v); err != nil {
		t.Fatalf("decode %q: %v", a.body, err)
	}
	return v
}

func countSessions(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM sessions").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
