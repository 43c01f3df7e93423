package storetest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a TCP proxy in front of the test's PostgreSQL server that a test
// can cut and restore: a database outage that only the processes connected
// through the proxy see, while the shared server keeps running for every
// other test. Cut closes every connection and refuses new ones (as a
// restarting server does); Restore listens again on the same address.
type Proxy struct {
	target string // host:port of the real server

	mu    sync.Mutex // guards ln, conns and cut
	addr  string
	ln    net.Listener
	conns map[net.Conn]struct{}
	cut   bool
	wg    sync.WaitGroup // the accept loops and the copies
}

// NewProxy starts a proxy to the host and port of the postgres:// URL raw;
// it is closed at t's cleanup.
func NewProxy(t testing.TB, raw string) *Proxy {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("proxy: parse %s: %v", raw, err)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "5432")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := &Proxy{target: host, addr: ln.Addr().String(), ln: ln, conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.close)
	return p
}

// URL is raw (a postgres:// URL) pointed at the proxy.
func (p *Proxy) URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Host = p.addr
	return u.String()
}

// Cut closes every proxied connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return
	}
	p.cut = true
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
}

// Restore accepts connections again, on the address the proxy had.
func (p *Proxy) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cut {
		return nil
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.ln, p.cut = ln, false
	p.serve(ln)
	return nil
}

func (p *Proxy) serve(ln net.Listener) {
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by Cut or close
			}
			p.forward(c)
		}
	})
}

// forward copies between c and a new connection to the server, both ways,
// until either side closes or the proxy is cut.
func (p *Proxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		_ = c.Close()
		_ = s.Close()
		return
	}
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.mu.Unlock()
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
	}
	p.wg.Go(func() { pipe(s, c) })
	p.wg.Go(func() { pipe(c, s) })
}

// close cuts the proxy for good and waits for its goroutines.
func (p *Proxy) close() {
	p.Cut()
	p.wg.Wait()
}
