package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrUnreachable is wrapped by a request that did not reach the extension
// (TYPO3 does not answer, or answers without the extension): nothing was done.
var ErrUnreachable = errors.New("the TYPO3 extension does not answer")

// ErrUnknownOutcome is wrapped by a write whose request was sent but whose
// answer was lost: it may or may not have been applied; a retry with the
// same key applies it at most once.
var ErrUnknownOutcome = errors.New("the TYPO3 extension's answer was lost")

// RefusedError is an answer of the extension that refuses the request
// (a 4xx or 503 with the contract's error body).
type RefusedError struct {
	Status int
	Code   string // "bad_signature", "conflict", "refused", "unknown_record", …
	Reason string // TYPO3's own words, when it gave some
	// Field and Current are set for a conflict: the column and its value now.
	Field   string
	Current string
}

func (e *RefusedError) Error() string {
	s := fmt.Sprintf("TYPO3 extension: %s (%d)", e.Code, e.Status)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Client sends signed requests to the extension of one TYPO3 installation.
type Client struct {
	base   *url.URL
	secret string
	http   *http.Client
	now    func() time.Time
}

// Config holds a Client's optional parts.
type Config struct {
	HTTP *http.Client     // nil: a client with a 15 s timeout
	Now  func() time.Time // nil: time.Now
}

// NewClient returns a client of the extension in the TYPO3 installation at
// base (its site's base URL, e.g. https://cms.example.org/) with the shared
// secret. A base that is not an absolute http(s) URL or a secret shorter
// than MinSecretLen is refused.
func NewClient(base, secret string, cfg *Config) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("TYPO3 bridge URL %q: an absolute http:// or https:// URL of TYPO3 is required", base)
	}
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("TYPO3 bridge secret: at least %d characters are required (it is the extension's secret)", MinSecretLen)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	c := &Client{base: u, secret: secret, http: &http.Client{Timeout: 15 * time.Second}, now: time.Now}
	if cfg != nil {
		if cfg.HTTP != nil {
			c.http = cfg.HTTP
		}
		if cfg.Now != nil {
			c.now = cfg.Now
		}
	}
	return c, nil
}

// Base is TYPO3's base URL as configured.
func (c *Client) Base() string { return c.base.String() + "/" }

// Secret is the shared secret, which also verifies the extension's tickets.
func (c *Client) Secret() string { return c.secret }

// call posts in as JSON to endpoint and decodes a 200 answer into out.
func (c *Client) call(ctx context.Context, endpoint string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	path := c.base.Path + "/waymark-bridge/v1/" + endpoint
	u := *c.base
	u.Path = path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	unix, nonce := c.now().Unix(), newNonce()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(HeaderTime, fmt.Sprint(unix))
	req.Header.Set(HeaderNonce, nonce)
	req.Header.Set(HeaderSignature, Sign(c.secret, http.MethodPost, path, unix, nonce, body))
	resp, err := c.http.Do(req)
	if err != nil {
		if sent(err) {
			return fmt.Errorf("%w: %s: %w", ErrUnknownOutcome, endpoint, err)
		}
		return fmt.Errorf("%w at %s: %w", ErrUnreachable, c.Base(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%w: %s: reading the answer: %w", ErrUnknownOutcome, endpoint, err)
	}
	var refusal struct {
		Error   string `json:"error"`
		Reason  string `json:"reason"`
		Field   string `json:"field"`
		Current string `json:"current"`
	}
	isJSON := strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json")
	if resp.StatusCode == http.StatusOK && isJSON {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%w: %s: the answer is not the contract's: %w", ErrUnknownOutcome, endpoint, err)
		}
		return nil
	}
	if isJSON && json.Unmarshal(raw, &refusal) == nil && refusal.Error != "" {
		return &RefusedError{Status: resp.StatusCode, Code: refusal.Error, Reason: refusal.Reason, Field: refusal.Field, Current: refusal.Current}
	}
	if resp.StatusCode >= 500 {
		return fmt.Errorf("%w: %s answered %s", ErrUnknownOutcome, endpoint, resp.Status)
	}
	return fmt.Errorf("%w at %s: %s answered %s without the extension's answer (is the extension installed?)",
		ErrUnreachable, c.Base(), path, resp.Status)
}

// sent reports whether a transport error happened after the request may
// have reached TYPO3 (not while connecting).
func sent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	var dns *net.DNSError
	return !errors.As(err, &dns)
}

// Info is the extension's answer to a ping.
type Info struct {
	OK         bool   `json:"ok"`
	TYPO3      string `json:"typo3"`
	Extension  string `json:"extension"`
	Workspaces bool   `json:"workspaces"`
}

// Ping checks that the extension answers and accepts the secret.
func (c *Client) Ping(ctx context.Context) (Info, error) {
	var info Info
	err := c.call(ctx, "ping", struct{}{}, &info)
	return info, err
}

// SessionActive asks whether TYPO3's backend session (its stored
// identifier) of user is still active and the user still enabled; reason
// says why not.
func (c *Client) SessionActive(ctx context.Context, user int64, session string) (active bool, reason string, err error) {
	var out struct {
		Active bool   `json:"active"`
		Reason string `json:"reason"`
	}
	err = c.call(ctx, "session", map[string]any{"user": user, "session": session}, &out)
	return out.Active, out.Reason, err
}

// Workspace is where a write lands: ID 0 is live, another a draft
// workspace of EXT:workspaces, with its title.
type Workspace struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
}

// Live reports whether a write lands live.
func (w Workspace) Live() bool { return w.ID == 0 }

// TargetRecord names a record's columns whose values /target answers as
// the user sees them in her workspace.
type TargetRecord struct {
	Table   string   `json:"table"`
	UID     int64    `json:"uid"`
	Columns []string `json:"columns"`
}

// Target asks where a write of user would land now and, with rec, the
// values of rec's columns as she sees them there (nil when she does not
// see the record there).
func (c *Client) Target(ctx context.Context, user int64, rec *TargetRecord) (Workspace, map[string]string, error) {
	body := map[string]any{"user": user}
	if rec != nil {
		body["record"] = rec
	}
	var out struct {
		Workspace Workspace         `json:"workspace"`
		Current   map[string]string `json:"current"`
	}
	err := c.call(ctx, "target", body, &out)
	return out.Workspace, out.Current, err
}

// FieldChange is the value of one column the editor was shown and the one
// she approved.
type FieldChange struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// ApplyRequest is one record's approved columns, written as User.
type ApplyRequest struct {
	User   int64                  `json:"user"`
	Table  string                 `json:"table"`
	UID    int64                  `json:"uid"`
	Key    string                 `json:"key"`
	Fields map[string]FieldChange `json:"fields"`
}

// Applied is the extension's answer to a write.
type Applied struct {
	Status    string    `json:"status"` // "applied" or "already_applied"
	Workspace Workspace `json:"workspace"`
	Record    struct {
		Table      string `json:"table"`
		UID        int64  `json:"uid"`
		VersionUID int64  `json:"versionUid"`
	} `json:"record"`
	Fields map[string]FieldChange `json:"fields"` // as TYPO3 stored them
}

// Apply writes the request through DataHandler. A conflict, a refusal of
// TYPO3 or an unknown record is a *RefusedError (nothing written); an
// answer lost after sending wraps ErrUnknownOutcome (retry with the same key).
func (c *Client) Apply(ctx context.Context, req ApplyRequest) (Applied, error) {
	var out Applied
	err := c.call(ctx, "apply", req, &out)
	return out, err
}
