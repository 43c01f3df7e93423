package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"waymark/internal/httpapi"
)

func TestServeShutsDownGracefullyLettingInFlightRequestFinish(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	entered := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-httpapi.Draining(r.Context()) // shutdown has begun
		io.WriteString(w, "finished")
	})
	addrc := make(chan string, 1)
	served := make(chan error, 1)
	go func() {
		served <- httpapi.Serve(ctx, "127.0.0.1:0", h, slog.New(slog.DiscardHandler), func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-served:
		t.Fatalf("Serve returned before ready: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not call ready")
	}
	type result struct {
		status int
		body   string
		err    error
	}
	got := make(chan result, 1)
	go func() {
		res, err := http.Get("http://" + addr + "/")
		if err != nil {
			got <- result{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		got <- result{res.StatusCode, string(b), err}
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("request did not reach the handler")
	}
	cancel()
	select {
	case r := <-got:
		if r.err != nil || r.status != http.StatusOK || r.body != "finished" {
			t.Errorf("in-flight request = %d %q %v, want 200 finished", r.status, r.body, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("in-flight request did not finish")
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after cancel = %v, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("server still accepts connections after shutdown")
	}
}

func TestServeFailsWhenAddressIsTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	called := false
	err = httpapi.Serve(context.Background(), ln.Addr().String(), http.NotFoundHandler(), nil, func(string) { called = true })
	if err == nil || called {
		t.Errorf("Serve on a taken address = %v (ready called %v), want an error and no ready", err, called)
	}
}
