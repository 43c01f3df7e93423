package httpapi

import (
	"cmp"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracePropagator reads the caller's W3C traceparent, so a request of a
// traced client continues its trace.
var tracePropagator = propagation.TraceContext{}

// startSpan begins the server span of request r when the
// server has a tracer; it returns r unchanged and a nil span otherwise.
func (s *Server) startSpan(r *http.Request) (*http.Request, trace.Span) {
	if s.tracer == nil {
		return r, nil
	}
	ctx := tracePropagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := s.tracer.Start(ctx, "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
	return r.WithContext(ctx), span
}

// endSpan names the span after the matched route and records the status:
// "HTTP POST /api/conversations/{id}/answer", an error from 500 on.
func endSpan(span trace.Span, method string, info *requestInfo, status int) {
	if span == nil {
		return
	}
	route := cmp.Or(info.route, "unmatched")
	if info.route != "" {
		span.SetName("HTTP " + method + " " + route)
	}
	span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status),
		attribute.String("waymark.request_id", info.id))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}
