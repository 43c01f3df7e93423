package scale_test

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	"waymark/internal/tracing"
	wt "waymark/internal/waymarktest"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes every export
// request and keeps its spans with the service name of their resource.
type otlpReceiver struct {
	mu      sync.Mutex // guards spans, service
	spans   []*tracepb.Span
	service map[string]bool
}

func newOTLPReceiver(t *testing.T) (*otlpReceiver, string) {
	rc := &otlpReceiver{service: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(raw, &req)
		}
		if r.URL.Path != "/v1/traces" || err != nil {
			t.Errorf("OTLP export %s: %v", r.URL.Path, err)
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					rc.service[a.GetValue().GetStringValue()] = true
				}
			}
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return rc, srv.URL
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, a guided tour on an
// API application and a separate worker application exports, to a real
// OTLP/HTTP receiver, the span of the answer's request, the span of the chat
// job that carried it out on the worker (a child of the request: the trace
// travels in the job), and under that job the model call and the approved
// tool call.
func TestTracedTourLinksTheRequestTheJobTheModelCallAndTheToolCall(t *testing.T) {
	rc, endpoint := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
	t.Setenv("OTEL_SERVICE_NAME", "waymark-under-test")
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		rc.mu.Lock()
		rc.spans = nil
		rc.mu.Unlock()
		traces, err := tracing.FromEnv(context.Background(), "test")
		if err != nil || traces == nil {
			t.Fatalf("tracing.FromEnv = %v, %v; want traces", traces, err)
		}
		api := wt.New(t, db, site, &wt.Options{APIOnly: true, Tracer: traces.Tracer()})
		wt.New(t, another(), "", &wt.Options{Workers: 1, ChatWorkers: 2, Tracer: traces.Tracer()})
		api.LLM.Add(write("c1", `{"description": "Neu"}`), completion(), answer("Fertig."))
		erika := api.As(wt.Erika)
		id := start(t, erika)
		conv := send(t, api, erika, id, "Los")
		if conv.Status != "awaiting_approval" {
			t.Fatalf("after the message: %+v", conv)
		}
		if conv = decide(t, api, erika, conv, "apply"); conv.Status != "idle" {
			t.Fatalf("after apply: %+v", conv)
		}
		if err := traces.Shutdown(context.Background()); err != nil {
			t.Fatalf("export: %v", err)
		}

		rc.mu.Lock()
		defer rc.mu.Unlock()
		if !rc.service["waymark-under-test"] {
			t.Errorf("service names %v, want OTEL_SERVICE_NAME's", rc.service)
		}
		byID := map[string]*tracepb.Span{}
		for _, s := range rc.spans {
			byID[hex.EncodeToString(s.SpanId)] = s
		}
		// under reports whether span s has an ancestor a.
		under := func(s, a *tracepb.Span) bool {
			for p := byID[hex.EncodeToString(s.ParentSpanId)]; p != nil; p = byID[hex.EncodeToString(p.ParentSpanId)] {
				if p == a {
					return true
				}
			}
			return false
		}
		find := func(pred func(*tracepb.Span) bool) []*tracepb.Span {
			var out []*tracepb.Span
			for _, s := range rc.spans {
				if pred(s) {
					out = append(out, s)
				}
			}
			return out
		}
		reqs := find(func(s *tracepb.Span) bool { return s.Name == "HTTP POST /api/conversations/{id}/answer" })
		if len(reqs) != 1 || reqs[0].Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Fatalf("answer request spans = %v; all spans: %v", reqs, names(rc.spans))
		}
		req := reqs[0]
		jobs := find(func(s *tracepb.Span) bool { return s.Name == "work waymark_chat" && under(s, req) })
		if len(jobs) != 1 || !strings.EqualFold(hex.EncodeToString(jobs[0].ParentSpanId), hex.EncodeToString(req.SpanId)) {
			t.Fatalf("chat job spans under the answer request = %d, want 1 child; all spans: %v", len(jobs), names(rc.spans))
		}
		job := jobs[0]
		if models := find(func(s *tracepb.Span) bool { return strings.HasPrefix(s.Name, "chat ") && under(s, job) }); len(models) == 0 {
			t.Errorf("no model call span under the job; all spans: %v", names(rc.spans))
		}
		if tools := find(func(s *tracepb.Span) bool { return s.Name == "execute_tool update_page_metadata" && under(s, job) }); len(tools) != 1 {
			t.Errorf("approved write spans under the job = %d, want 1; all spans: %v", len(tools), names(rc.spans))
		}
		for _, s := range find(func(s *tracepb.Span) bool { return under(s, req) }) {
			if string(s.TraceId) != string(req.TraceId) {
				t.Errorf("span %s is under the request but in another trace", s.Name)
			}
		}
	})
}

func names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
