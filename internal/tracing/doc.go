// Package tracing sets up optional OpenTelemetry traces:
// a tracer provider that exports over OTLP/HTTP, configured by the standard
// OTEL_* variables and off unless they ask for it. The spans themselves are
// made at the seams that own them — HTTP requests in httpapi, queue jobs in
// queue, model calls in llm, tool calls in tool — each from a trace.Tracer
// that is nil when tracing is off, so an installation without tracing runs
// no tracing code at all.
package tracing
