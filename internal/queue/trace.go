package queue

import (
	"context"
	"encoding/json"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// With a tracer (Config.Tracer) a job carries the trace of
// the request that inserted it in its River metadata (W3C traceparent), and
// its work is a span that continues that trace: request → job → model and
// tool calls, across processes.

var jobPropagator = propagation.TraceContext{}

// traceMetadata is the metadata of a job inserted under ctx: the trace
// context of its span, or nil without a tracer or a span.
func (q *Queue) traceMetadata(ctx context.Context) []byte {
	if q.tracer == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	jobPropagator.Inject(ctx, carrier)
	raw, err := json.Marshal(carrier)
	if err != nil {
		return nil
	}
	return raw
}

// traceMiddleware makes a span of every job's work.
func traceMiddleware(t trace.Tracer) rivertype.WorkerMiddleware {
	return river.WorkerMiddlewareFunc(func(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
		carrier := propagation.MapCarrier{}
		_ = json.Unmarshal(job.Metadata, &carrier) // other metadata or none: a trace of its own
		ctx = jobPropagator.Extract(ctx, carrier)
		ctx, span := t.Start(ctx, "work "+job.Kind, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
			attribute.String("messaging.system", "river"), attribute.String("messaging.destination.name", job.Queue),
			attribute.Int64("messaging.message.id", job.ID), attribute.Int("waymark.job.attempt", job.Attempt)))
		defer span.End()
		err := doInner(ctx)
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		return err
	})
}
