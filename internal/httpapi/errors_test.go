package httpapi_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/access"
	"waymark/internal/fault"
	"waymark/internal/httpapi"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestHandlerErrorsMapToStatusAndSafeMessage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		b.srv.Handle("GET /test/internal", func(w http.ResponseWriter, r *http.Request) error {
			return fmt.Errorf("query runs: %w", errors.New("secret detail at 10.0.0.5"))
		})
		b.srv.Handle("GET /test/denied", func(w http.ResponseWriter, r *http.Request) error {
			return fmt.Errorf("edit page 3: %w", &access.DeniedError{Reason: "page 3 not in mounts"})
		})
		b.srv.Handle("GET /test/conflict", func(w http.ResponseWriter, r *http.Request) error {
			return fmt.Errorf("turn: %w", errBusy.With("a turn is running").Wrap(errors.New("row lock held")))
		})
		b.srv.HandlePublic("GET /test/panic", func(w http.ResponseWriter, r *http.Request) error {
			panic("boom secret")
		})

		a := b.do(t, call{method: "GET", path: "/test/internal", token: erikaToken, requestID: "req-int-1"})
		msg := wantError(t, "internal error", a, http.StatusInternalServerError, "internal")
		if strings.Contains(string(a.body), "secret") || !strings.Contains(msg, "req-int-1") {
			t.Errorf("internal error body %s: want no detail and the request id", a.body)
		}
		if logs := b.logs.String(); !strings.Contains(logs, "secret detail at 10.0.0.5") || !strings.Contains(logs, "request_id=req-int-1") {
			t.Errorf("log lacks the detail with the request id:\n%s", logs)
		}

		a = b.do(t, call{method: "GET", path: "/test/denied", token: erikaToken})
		if msg := wantError(t, "denied", a, http.StatusForbidden, "forbidden"); strings.Contains(msg, "mounts") {
			t.Errorf("denied message %q shows the reason", msg)
		}

		a = b.do(t, call{method: "GET", path: "/test/conflict", token: erikaToken})
		if msg := wantError(t, "fault", a, http.StatusConflict, "busy"); msg != "a turn is running" {
			t.Errorf("fault message = %q, want %q", msg, "a turn is running")
		}

		a = b.do(t, call{method: "GET", path: "/test/panic", requestID: "req-panic"})
		wantError(t, "panic", a, http.StatusInternalServerError, "internal")
		if strings.Contains(string(a.body), "boom") || !strings.Contains(b.logs.String(), "boom secret") {
			t.Errorf("panic: body %s must hide and the log must show the panic", a.body)
		}
		if a := b.do(t, call{method: "GET", path: "/healthz"}); a.status != http.StatusOK {
			t.Errorf("GET /healthz after panic = %d, want the server still serving", a.status)
		}
	})
}

var errBusy = fault.New(fault.Conflict, "busy", "busy")

// TestEveryKindHasAStatus: the kind → status table covers the closed kind
// list, and only Internal is a 5xx besides Unavailable.
func TestEveryKindHasAStatus(t *testing.T) {
	seen := map[int]fault.Kind{}
	for _, k := range fault.Kinds() {
		st := httpapi.StatusOf(k)
		if k != fault.Internal && st == http.StatusInternalServerError {
			t.Errorf("kind %s has no status", k)
		}
		if other, ok := seen[st]; ok {
			t.Errorf("kinds %s and %s share status %d", other, k, st)
		}
		seen[st] = k
	}
}

func TestClassifyAnswersByKind(t *testing.T) {
	cause := errors.New("sql: database is closed")
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("x: %w", errBusy), http.StatusConflict, "busy"},
		{cause, http.StatusInternalServerError, "internal"},
		{fmt.Errorf("load: %w", fault.New(fault.Internal, "internal", "x").Wrap(cause)), http.StatusInternalServerError, "internal"},
		{&access.DeniedError{Reason: "r"}, http.StatusForbidden, "forbidden"},
	} {
		if st, code := httpapi.Classify(c.err); st != c.status || code != c.code {
			t.Errorf("Classify(%v) = %d %s, want %d %s", c.err, st, code, c.status, c.code)
		}
	}
}
