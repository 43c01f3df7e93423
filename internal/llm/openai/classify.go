package openai

import (
	"errors"
	"io"
	"net"
	"net/http"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"waymark/internal/llm"
)

// classify turns the failure of one attempt into an *llm.Error. seen holds
// the HTTP response the attempt got, if any; timedOut tells that the
// attempt's own deadline (Config.Timeout) expired.
func (p *Provider) classify(err error, seen *response, timedOut bool) *llm.Error {
	var le *llm.Error
	if errors.As(err, &le) {
		return le
	}
	status, header, buffered, readErr := seen.get()
	message := ""
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		status = apiErr.StatusCode
		message = apiErr.Message
		if apiErr.Response != nil && header == nil {
			header = apiErr.Response.Header
		}
	}
	if message == "" {
		message = http.StatusText(status)
	}
	var streamErr *ssestream.StreamError
	switch {
	case timedOut:
		return &llm.Error{Kind: llm.KindRetryable, Status: status,
			Err: p.errorf("no complete answer within %s", p.cfg.Timeout)}
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500:
		return &llm.Error{Kind: llm.KindRetryable, Status: status,
			RetryAfter: retryAfter(header, p.cfg.Clock.Now()), Err: p.errorf("%s", message)}
	case status >= 400:
		return &llm.Error{Kind: llm.KindNotRetryable, Status: status, Err: p.errorf("%s", message)}
	case readErr != nil:
		return &llm.Error{Kind: llm.KindRetryable, Status: status, Err: p.errorf("connection: %s", readErr.Error())}
	case buffered && status >= 200 && status < 300:
		return &llm.Error{Kind: llm.KindBadResponse, Status: status, Err: p.errorf("unreadable response: %s", err.Error())}
	case errors.As(err, &streamErr):
		return &llm.Error{Kind: llm.KindRetryable, Status: status, Err: p.errorf("%s", streamErr.Message)}
	case transport(err):
		return &llm.Error{Kind: llm.KindRetryable, Status: status, Err: p.errorf("connection: %s", err.Error())}
	case status >= 200 && status < 300:
		return &llm.Error{Kind: llm.KindBadResponse, Status: status, Err: p.errorf("unreadable response: %s", err.Error())}
	}
	return &llm.Error{Kind: llm.KindRetryable, Status: status, Err: p.errorf("%s", err.Error())}
}

// transport reports network failures: refused or reset connections, DNS,
// bodies cut short.
func transport(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, net.ErrClosed)
}
