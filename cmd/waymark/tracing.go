package main

import (
	"context"
	"fmt"
	"time"

	"waymark/internal/buildinfo"
	"waymark/internal/tracing"
)

// startTracing sets up the OpenTelemetry traces the OTEL_* variables ask
// for (tracing.Enabled says when): nil traces when they ask
// for none. The returned stop flushes the spans still buffered, for at most
// five seconds.
func startTracing(ctx context.Context, e *env) (*tracing.Traces, func(), error) {
	t, err := tracing.FromEnv(ctx, buildinfo.Read(version).Version)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if t == nil {
		return nil, func() {}, nil
	}
	e.log.Info("tracing on: OpenTelemetry spans export over OTLP/HTTP (OTEL_* variables)")
	return t, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			e.log.Warn("tracing: spans not exported", "err", err)
		}
	}, nil
}

// startObserving starts what serve and worker offer to watch them by: the
// CPU profile of --cpuprofile (profile) and the traces of the OTEL_*
// variables. stop ends both.
func startObserving(ctx context.Context, e *env, profile string) (traces *tracing.Traces, stop func(), err error) {
	stopProfile, err := startCPUProfile(profile)
	if err != nil {
		return nil, nil, err
	}
	traces, stopTracing, err := startTracing(ctx, e)
	if err != nil {
		stopProfile()
		return nil, nil, err
	}
	return traces, func() { stopTracing(); stopProfile() }, nil
}
