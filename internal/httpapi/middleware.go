package httpapi

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// requestInfo travels with a request from the outermost middleware to the
// handler and back: the handler side fills route and uid, the writer the
// status. One request is served by one goroutine, so it needs no lock.
type requestInfo struct {
	id          string
	client      string // the client's address (clientIP)
	route       string // matched pattern without method; "" while unmatched
	uid         int64  // authenticated user, 0 for none
	status      int
	wroteHeader bool
}

type infoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{} // a handler called outside the server, e.g. in a test
}

// serveHTTP is the outer middleware: request id, panic recovery, access
// log, metrics and (with a tracer) the request's span around the mux.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	info := &requestInfo{id: requestID(r.Header.Get("X-Request-Id")), client: clientIP(r, s.trusted)}
	w.Header().Set("X-Request-Id", info.id)
	rw := &responseWriter{ResponseWriter: w, info: info}
	probe := isProbe(r)
	var span trace.Span
	if !probe {
		r, span = s.startSpan(r)
	}
	r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.logger.Error("panic", "request_id", info.id, "panic", p, "stack", string(debug.Stack()))
			if !info.wroteHeader {
				writeErrorBody(rw, http.StatusInternalServerError, "internal", "internal error (request "+info.id+")")
			} else {
				info.status = http.StatusInternalServerError
			}
		}
		s.observe(r, info, time.Since(start), span, probe)
	}()
	if err := checkURLText(r); err != nil {
		s.writeError(rw, r, err)
		return
	}
	s.mux.ServeHTTP(rw, r)
}

// isProbe reports a request of the operational routes an orchestrator or
// Prometheus calls every few seconds: they are counted in the request
// metrics but neither traced nor access-logged, so that they do not drown
// the requests of people.
func isProbe(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch r.URL.Path {
	case "/healthz", "/readyz", "/metrics":
		return true
	}
	return false
}

// observe writes the access log line (not of a probe) and the request metrics.
func (s *Server) observe(r *http.Request, info *requestInfo, d time.Duration, span trace.Span, probe bool) {
	status := info.status
	if !info.wroteHeader && status == 0 {
		status = http.StatusOK
	}
	route := cmp.Or(info.route, "unmatched")
	method := r.Method
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
	default:
		method = "other"
	}
	s.metrics.requests.WithLabelValues(strconv.Itoa(status), method, route).Inc()
	s.metrics.duration.WithLabelValues(method, route).Observe(d.Seconds())
	if probe {
		return
	}
	s.logger.Info("request", "method", r.Method, "path", r.URL.Path, "status", status,
		"duration", d, "request_id", info.id, "user", info.uid, "client", info.client)
	endSpan(span, method, info, status)
}

// routeOf strips the method from a mux pattern: "GET /api/me" → "/api/me".
func routeOf(pattern string) string {
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		return strings.TrimLeft(pattern[i:], " ")
	}
	return pattern
}

// requestID keeps a client's X-Request-Id when it is short printable ASCII
// without spaces, and otherwise makes a new one.
func requestID(given string) string {
	if given != "" && len(given) <= 128 && !strings.ContainsFunc(given, func(c rune) bool { return c <= ' ' || c > '~' }) {
		return given
	}
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// responseWriter records the status for the log and turns the mux's own
// plain-text 404 and 405 answers for unmatched requests into error JSON.
type responseWriter struct {
	http.ResponseWriter
	info    *requestInfo
	swallow bool // the body of the mux's plain-text error is dropped
}

func (w *responseWriter) WriteHeader(code int) {
	if w.info.wroteHeader {
		return
	}
	if w.info.route == "" && (code == http.StatusNotFound || code == http.StatusMethodNotAllowed) {
		w.swallow = true
		w.info.wroteHeader, w.info.status = true, code
		msg, errCode := "no such route", errNotFound.Code()
		if code == http.StatusMethodNotAllowed {
			msg, errCode = errMethodNotAllowed.Message()+"; allowed: "+w.Header().Get("Allow"), errMethodNotAllowed.Code()
		}
		w.Header().Del("Content-Length")
		var b errorBody
		b.Error.Code, b.Error.Message = errCode, msg
		_ = WriteJSON(w.ResponseWriter, code, b)
		return
	}
	w.info.wroteHeader, w.info.status = true, code
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.info.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.swallow {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Flush sends buffered data (for streams).
func (w *responseWriter) Flush() {
	if !w.info.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
