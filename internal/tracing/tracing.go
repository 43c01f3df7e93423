package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Name is the instrumentation scope of Waymark's spans.
const Name = "waymark"

// Traces is a configured tracer provider; the zero of *Traces (nil) is
// tracing off.
type Traces struct {
	provider *sdktrace.TracerProvider
}

// ConfigError is a refused OTEL_* setting, naming the variable.
type ConfigError string

func (e ConfigError) Error() string { return string(e) }

// Enabled reports whether the environment asks for traces: OTEL_TRACES_EXPORTER
// is "otlp", or it is unset and an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set;
// OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn them off. Any
// other exporter, and a protocol other than http/protobuf, is a
// ConfigError: only OTLP over HTTP is built in.
func Enabled(getenv func(string) string) (bool, error) {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false, nil
	}
	on := false
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false, nil
	case "otlp":
		on = true
	case "":
		on = getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	default:
		return false, ConfigError(fmt.Sprintf("OTEL_TRACES_EXPORTER=%q: only otlp (or none) is supported", exp))
	}
	if !on {
		return false, nil
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(k); p != "" {
			if p != "http/protobuf" {
				return false, ConfigError(fmt.Sprintf("%s=%q: only http/protobuf is supported", k, p))
			}
			break // the traces variable wins over the general one
		}
	}
	return true, nil
}

// FromEnv returns the traces the process environment asks for (Enabled),
// or nil when it asks for none. The exporter reads the OTEL_EXPORTER_OTLP_*
// variables (endpoint, headers, timeout, compression), the SDK the sampler
// and batch variables (OTEL_TRACES_SAMPLER, OTEL_BSP_*), and the resource
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; the service name defaults
// to "waymark", its version to version.
func FromEnv(ctx context.Context, version string) (*Traces, error) {
	on, err := Enabled(os.Getenv)
	if err != nil || !on {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "waymark"), attribute.String("service.version", version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win over the defaults
		resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return &Traces{provider: sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))}, nil
}

// New returns traces on a provider of the caller's (tests: an in-memory
// exporter).
func New(p *sdktrace.TracerProvider) *Traces { return &Traces{provider: p} }

// Tracer is Waymark's tracer, nil when t is nil (tracing off).
func (t *Traces) Tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.provider.Tracer(Name)
}

// Shutdown exports the spans still buffered and stops the exporter; a nil t
// does nothing.
func (t *Traces) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}
