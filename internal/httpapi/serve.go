package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ShutdownTimeout is how long Serve waits for in-flight requests after its
// context ends.
const ShutdownTimeout = 10 * time.Second

type drainKey struct{}

// Draining returns a channel closed when the server serving the request of
// ctx begins to shut down. Long-lived handlers (streams) end on it so that
// shutdown does not wait for them. Outside Serve it returns nil (never closed).
func Draining(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(drainKey{}).(chan struct{})
	return ch
}

// Serve listens on addr, calls ready with the address actually bound (so
// ":0" works), and serves h until ctx ends; then it shuts down gracefully,
// letting in-flight requests finish for up to ShutdownTimeout, and returns
// nil. It returns an error when it cannot listen, when serving fails, or
// when connections had to be cut at the end of the timeout.
func Serve(ctx context.Context, addr string, h http.Handler, logger *slog.Logger, ready func(addr string)) error {
	if logger == nil {
		logger = slog.Default()
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	draining := make(chan struct{})
	srv := &http.Server{
		Handler: h,
		// No ReadTimeout or WriteTimeout: they would cut event streams. Bodies
		// are bounded by DecodeJSON; headers by these two.
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context {
			return context.WithValue(context.Background(), drainKey{}, draining)
		},
	}
	srv.RegisterOnShutdown(func() { close(draining) })
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	bound := ln.Addr().String()
	logger.Info("serving", "addr", bound)
	if ready != nil {
		ready(bound)
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve on %s: %w", bound, err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "addr", bound)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", bound, serr)
	}
	if err != nil {
		_ = srv.Close()
		return fmt.Errorf("shutdown of %s: %w", bound, err)
	}
	return nil
}
