package bench

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// balancer spreads the API requests over the live servers, as the load
// balancer in front of a rolling restart does: a server is taken out of
// the rotation before it is stopped, and a request that finds no server
// listening (connection refused) goes to the next one. A request a server
// took is never sent twice.
type balancer struct {
	mu       sync.Mutex // guards backends and next
	backends []string   // base URLs by server index; "" while it restarts
	next     int

	client *http.Client
	srv    *http.Server
	url    string
}

func newBalancer(backends []string) (*balancer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &balancer{backends: backends, url: "http://" + ln.Addr().String(),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}}}
	b.srv = &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = b.srv.Serve(ln) }()
	return b, nil
}

// set puts server i in the rotation at base ("": out of it).
func (b *balancer) set(i int, base string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends[i] = base
}

// pick returns the next live server, round-robin ("" when none is).
func (b *balancer) pick() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for range b.backends {
		base := b.backends[b.next%len(b.backends)]
		b.next++
		if base != "" {
			return base
		}
	}
	return ""
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for attempt := 0; attempt < 100 && r.Context().Err() == nil; attempt++ {
		base := b.pick()
		if base == "" {
			time.Sleep(20 * time.Millisecond) // every server restarts: wait for one, as a balancer queues
			continue
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := b.client.Do(req)
		if err != nil {
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" {
				continue // nobody listens there (any more): the next server
			}
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		resp.Body.Close()
		return
	}
	http.Error(w, "no server took the request", http.StatusBadGateway)
}

func (b *balancer) close() { _ = b.srv.Close() }
