package httpapi

import (
	"encoding/json"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"
)

// clientLimit is a listener that bounds the open connections per client
// address: one client cannot hold all of the server's
// connections. A connection beyond the bound gets a plain 429 and is closed
// at once, before any of its bytes are read.
type clientLimit struct {
	net.Listener
	max    int
	logger *slog.Logger

	mu   sync.Mutex     // guards open
	open map[string]int // open connections by client address
}

func newClientLimit(ln net.Listener, max int, logger *slog.Logger) *clientLimit {
	return &clientLimit{Listener: ln, max: max, logger: logger, open: map[string]int{}}
}

// tooManyConnsBody is the error body of errTooManyConnections, written on
// the raw connection before any handler runs.
var tooManyConnsBody = func() string {
	var b errorBody
	b.Error.Code, b.Error.Message = errTooManyConnections.Code(), errTooManyConnections.Message()
	j, _ := json.Marshal(b)
	return string(j) + "\n"
}()

var tooManyConns = "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json; charset=utf-8\r\n" +
	"Retry-After: 1\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(tooManyConnsBody)) + "\r\n\r\n" + tooManyConnsBody

// Accept returns the next connection within its client's bound.
func (l *clientLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := clientHost(c.RemoteAddr())
		l.mu.Lock()
		n := l.open[host]
		if n < l.max {
			l.open[host] = n + 1
		}
		l.mu.Unlock()
		if n < l.max {
			return &limitedConn{Conn: c, release: func() { l.release(host) }}, nil
		}
		l.logger.Warn("connection refused: too many from one client", "client", host, "max", l.max)
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.Write([]byte(tooManyConns))
		_ = c.Close()
	}
}

func (l *clientLimit) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[host] <= 1 {
		delete(l.open, host)
	} else {
		l.open[host]--
	}
}

func clientHost(a net.Addr) string {
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}

// limitedConn gives its slot back once, when closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
