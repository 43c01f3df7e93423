package tracing

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Tracing is off by default and on only when the OTEL_* variables ask for
// OTLP; an exporter or protocol it does not have is refused by name.
func TestEnabledReadsTheStandardVariables(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		want    bool
		wantErr string
	}{
		{"nothing set", nil, false, ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true, ""},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true, ""},
		{"exporter otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, ""},
		{"exporter none wins over an endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false, ""},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false, ""},
		{"http/protobuf", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, true, ""},
		{"grpc refused", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{"traces protocol wins", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, true, ""},
		{"zipkin refused", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, "OTEL_TRACES_EXPORTER"},
		{"protocol alone is not on", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Enabled(func(k string) string { return c.env[k] })
			var ce ConfigError
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("Enabled = %v, want no error", err)
			case c.wantErr != "" && (!errors.As(err, &ce) || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("Enabled error = %v, want a ConfigError naming %s", err, c.wantErr)
			}
			if got != c.want {
				t.Errorf("Enabled = %v, want %v", got, c.want)
			}
		})
	}
}

// Off, FromEnv builds nothing: the tracer is nil, so no seam makes a span.
func TestFromEnvIsNilWhenOff(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	tr, err := FromEnv(context.Background(), "test")
	if err != nil || tr != nil {
		t.Fatalf("FromEnv = %v, %v; want nil, nil", tr, err)
	}
	if tr.Tracer() != nil {
		t.Error("a nil Traces gave a tracer")
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown of nil traces = %v", err)
	}
}
