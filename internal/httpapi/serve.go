package httpapi

import (
	"cmp"
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

// The defaults of ServeConfig.
const (
	DefaultReadTimeout       = 30 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxClientConns    = 64
)

// ServeConfig tunes ServeWith; zero values take the defaults.
type ServeConfig struct {
	Logger *slog.Logger      // nil: slog.Default()
	Ready  func(addr string) // called with the address actually bound (so ":0" works)
	// ReadTimeout bounds reading a whole request, body included. It does not
	// end a stream: a request without a body is read by the time it streams.
	ReadTimeout       time.Duration
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration // between requests of a kept-alive connection
	// MaxClientConns bounds the open connections of one client address; the
	// connection beyond it is answered 429 and closed. Behind a reverse proxy
	// every client has the proxy's address: raise it there (or limit at the proxy).
	MaxClientConns int
	// TLSCert and TLSKey, both or neither, serve HTTPS with that certificate.
	TLSCert, TLSKey string
	// ShutdownTimeout bounds the wait for in-flight requests once ctx
	// ended (default ShutdownTimeout; --shutdown-timeout).
	ShutdownTimeout time.Duration
}

type drainKey struct{}

// Draining returns a channel closed when the server serving the request of
// ctx begins to shut down. Long-lived handlers (streams) end on it so that
// shutdown does not wait for them. Outside Serve it returns nil (never closed).
func Draining(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(drainKey{}).(chan struct{})
	return ch
}

// Serve is ServeWith with the default timeouts and limits.
func Serve(ctx context.Context, addr string, h http.Handler, logger *slog.Logger, ready func(addr string)) error {
	return ServeWith(ctx, addr, h, &ServeConfig{Logger: logger, Ready: ready})
}

// ServeWith listens on addr, calls cfg.Ready with the address actually bound,
// and serves h until ctx ends; then it shuts down gracefully, letting
// in-flight requests finish for up to ShutdownTimeout, and returns nil. It
// returns an error when it cannot listen, when serving fails, or when
// connections had to be cut at the end of the timeout.
func ServeWith(ctx context.Context, addr string, h http.Handler, cfg *ServeConfig) error {
	if cfg == nil {
		cfg = &ServeConfig{}
	}
	logger := cmp.Or(cfg.Logger, slog.Default())
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return errors.New("TLS needs both a certificate and a key file")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	ln = newClientLimit(ln, cmp.Or(cfg.MaxClientConns, DefaultMaxClientConns), logger)
	draining := make(chan struct{})
	srv := &http.Server{
		Handler: h,
		// No WriteTimeout: it would cut event streams. ReadTimeout bounds a
		// slow body (TestEventStreamOutlivesReadTimeout: it leaves streams be).
		ReadTimeout:       cmp.Or(cfg.ReadTimeout, DefaultReadTimeout),
		ReadHeaderTimeout: cmp.Or(cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout),
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context {
			return context.WithValue(context.Background(), drainKey{}, draining)
		},
	}
	srv.RegisterOnShutdown(func() { close(draining) })
	errc := make(chan error, 1)
	scheme := "http"
	if cfg.TLSCert != "" {
		scheme = "https"
		go func() { errc <- srv.ServeTLS(ln, cfg.TLSCert, cfg.TLSKey) }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}
	bound := ln.Addr().String()
	logger.Info("serving", "addr", bound, "scheme", scheme)
	if cfg.Ready != nil {
		cfg.Ready(bound)
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve on %s: %w", bound, err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "addr", bound)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(cfg.ShutdownTimeout, ShutdownTimeout))
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
