package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/access"
	"waymark/internal/auth"
	"waymark/internal/fault"
	"waymark/internal/httpapi"
)

// Authenticator authenticates a request as the JSON API does
// (httpapi.Server.Authenticate): the returned request carries the actor.
type Authenticator interface {
	Authenticate(r *http.Request) (*http.Request, error)
	// WriteError answers a refused request as the JSON API answers it.
	WriteError(w http.ResponseWriter, r *http.Request, err error)
}

var _ Authenticator = (*httpapi.Server)(nil)

// Handler answers MCP over Streamable HTTP. Every request needs an API
// token (Authorization: Bearer) naming an active user — 401 before anything
// else, a session cookie does not do —, then an Origin, when it sends one,
// of the server itself or of origins (the MCP transport's rule against DNS
// rebinding: 403 otherwise). A session is bound to the user that opened it:
// another user's token is refused on it (403).
func (s *Server) Handler(authn Authenticator, origins []string) http.Handler {
	srv := s.mcpServer(s.httpWho)
	// The SDK's own Host check would refuse a reverse proxy's requests on a
	// loopback listener; hostAllowed does it knowing the --public-url.
	streamable := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Logger: s.log,
		SessionTimeout: time.Hour, DisableLocalhostProtection: true})
	// The SDK binds a session to TokenInfo.UserID: the user authenticate
	// put on the request.
	bound := sdkauth.RequireBearerToken(func(ctx context.Context, _ string, r *http.Request) (*sdkauth.TokenInfo, error) {
		a := httpapi.ActorFrom(r.Context())
		if a == nil {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{UserID: strconv.FormatInt(a.UID, 10)}, nil
	}, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(streamable)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			authn.WriteError(w, r, auth.ErrUnauthenticated)
			return
		}
		r, err := authn.Authenticate(r)
		if err != nil {
			authn.WriteError(w, r, err)
			return
		}
		if !originAllowed(r, origins) || !hostAllowed(r, origins) {
			authn.WriteError(w, r, errOrigin)
			return
		}
		if err := needsSession(r); err != nil {
			authn.WriteError(w, r, err)
			return
		}
		if drain := httpapi.Draining(r.Context()); drain != nil {
			// A stream (the standalone GET, a tool call's answer) ends when
			// the server shuts down, so that shutdown does not wait for it.
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			go func() {
				select {
				case <-drain:
					cancel()
				case <-ctx.Done():
				}
			}()
			r = r.WithContext(ctx)
		}
		bound.ServeHTTP(w, r)
	})
}

// errOrigin refuses a request from a web page of another origin.
var errOrigin = fault.New(fault.Forbidden, "bad_origin", "requests from this origin are not accepted")

// originAllowed reports whether the request's Origin, if it sends one, is
// the server's own (the Host it was sent to) or one of origins.
func originAllowed(r *http.Request, origins []string) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true // not a browser's cross-origin request
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false // "null" and the like
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, allowed := range origins {
		if a, err := url.Parse(allowed); err == nil && strings.EqualFold(a.Scheme, u.Scheme) && strings.EqualFold(a.Host, u.Host) {
			return true
		}
	}
	return false
}

// hostAllowed guards against DNS rebinding as the MCP transport requires: a
// request that reached a loopback listener must name a loopback Host, or
// the host of one of origins (a reverse proxy passing the public host on).
func hostAllowed(r *http.Request, origins []string) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !loopback(local.String()) || loopback(r.Host) {
		return true
	}
	for _, allowed := range origins {
		if a, err := url.Parse(allowed); err == nil && strings.EqualFold(a.Host, r.Host) {
			return true
		}
	}
	return false
}

// loopback reports whether a host (with or without port) is a loopback address or localhost.
func loopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// errNoSession refuses a request that belongs to a session but names none.
var errNoSession = fault.New(fault.Invalid, "bad_request", "bad request")

// needsSession refuses (400) a POST without an Mcp-Session-Id header unless
// it opens a session (initialize) or asks what the server speaks
// (server/discover, answered as a server of the initialize handshake);
// the SDK would otherwise open a session for any request.
func needsSession(r *http.Request) error {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || r.Body == nil {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, httpapi.MaxBodyBytes+1))
	if err != nil {
		return errNoSession.With("cannot read request body").Wrap(err)
	}
	// The SDK reads the body whole, as sent: what was read, then the rest.
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	var msg struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return nil // a batch or malformed JSON: the SDK answers it
	}
	if msg.Method == "initialize" || msg.Method == methodDiscover {
		return nil
	}
	return errNoSession.With("Mcp-Session-Id header required: open a session with initialize first")
}

// httpWho is the user of a tool call over HTTP: the one its request's
// token named, as stored now.
func (s *Server) httpWho(ctx context.Context, extra *sdk.RequestExtra) (*access.Actor, error) {
	if extra == nil || extra.TokenInfo == nil {
		return nil, auth.ErrUnauthenticated
	}
	uid, err := strconv.ParseInt(extra.TokenInfo.UserID, 10, 64)
	if err != nil {
		return nil, auth.ErrUnauthenticated
	}
	return s.load(ctx, uid)
}

// load loads an active user; a missing or disabled one is unauthenticated.
func (s *Server) load(ctx context.Context, uid int64) (*access.Actor, error) {
	a, err := access.LoadActor(ctx, s.d.Directory, s.d.DB, uid)
	if errors.Is(err, access.ErrNoUser) || (err == nil && !a.Active()) {
		return nil, auth.ErrUnauthenticated
	}
	return a, err
}
