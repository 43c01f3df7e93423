package httpapi_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/access"
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
			return &httpapi.Error{Status: http.StatusConflict, Code: "busy", Message: "a turn is running", Err: errors.New("row lock held")}
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
		if msg := wantError(t, "httpapi.Error", a, http.StatusConflict, "busy"); msg != "a turn is running" {
			t.Errorf("httpapi.Error message = %q, want %q", msg, "a turn is running")
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

func TestErrorfFormatsMessageAndUnwraps(t *testing.T) {
	t.Parallel()
	e := httpapi.Errorf(http.StatusNotFound, "not_found", "run %s not found", "abc")
	if e.Status != 404 || e.Code != "not_found" || e.Message != "run abc not found" || e.Error() != "run abc not found" {
		t.Errorf("Errorf = %+v", e)
	}
	cause := errors.New("cause")
	wrapped := fmt.Errorf("ctx: %w", &httpapi.Error{Status: 500, Code: "x", Message: "m", Err: cause})
	if !errors.Is(wrapped, cause) {
		t.Error("errors.Is does not reach the cause through *Error")
	}
}
