package llm

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Traced returns p with a client span around every model call,
// named "chat MODEL" with the OpenTelemetry gen_ai attributes:
// operation, provider, model, finish reason and token usage. With a nil
// tracer it returns p itself, so tracing off costs nothing.
func Traced(p Provider, t trace.Tracer, provider string) Provider {
	if t == nil || p == nil {
		return p
	}
	return &traced{p: p, t: t, provider: provider}
}

type traced struct {
	p        Provider
	t        trace.Tracer
	provider string // gen_ai.provider.name: the configuration's provider type
}

func (tp *traced) Complete(ctx context.Context, req Request) (Response, error) {
	ctx, span := tp.t.Start(ctx, "chat "+req.Model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", tp.provider),
			attribute.String("gen_ai.request.model", req.Model), attribute.Int("waymark.llm.messages", len(req.Messages)),
			attribute.Int("waymark.llm.tools", len(req.Tools))))
	defer span.End()
	resp, err := tp.p.Complete(ctx, req)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return resp, err
	}
	span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{resp.FinishReason}),
		attribute.Int("gen_ai.usage.input_tokens", resp.Usage.PromptTokens),
		attribute.Int("gen_ai.usage.output_tokens", resp.Usage.CompletionTokens),
		attribute.Int("waymark.llm.tool_calls", len(resp.Message.ToolCalls)))
	return resp, nil
}
