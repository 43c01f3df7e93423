package hostile_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"waymark/internal/httpapi"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// serveReal serves h behind httpapi.ServeWith (the server waymark serve
// runs) with cfg until the test ends, and returns its address.
func serveReal(t *testing.T, h http.Handler, cfg httpapi.ServeConfig) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	cfg.Ready = func(a string) { addrc <- a }
	go func() { done <- httpapi.ServeWith(ctx, "127.0.0.1:0", h, &cfg) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-addrc:
		return a
	case err := <-done:
		t.Fatalf("ServeWith: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("ServeWith did not become ready")
	}
	return ""
}

// closedWithin reports whether the server ends conn (EOF, reset or an
// answer followed by the close) within d.
func closedWithin(conn net.Conn, d time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return err == nil || !(errorsAs(err, &ne) && ne.Timeout())
}

func errorsAs(err error, ne *net.Error) bool {
	e, ok := err.(net.Error)
	if ok {
		*ne = e
	}
	return ok
}

// A client that sends its body slowly is cut off after the
// server's ReadTimeout instead of holding its connection.
func TestSlowBodyIsCutOffAfterReadTimeout(t *testing.T) {
	e := wt.New(t, storetest.SQLite(t), wt.Site, nil)
	addr := serveReal(t, e.App.Handler(), httpapi.ServeConfig{ReadTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(conn, 10*time.Second) {
		t.Error("a connection whose body stalls is still open 10 s later, want it cut after the 300 ms ReadTimeout")
	}
}

// ReadTimeout does not cut a long-lived event stream.
func TestEventStreamOutlivesReadTimeout(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		e.LLM.Add(toolCall("c1", "update_page_metadata", `{"page": 1, "fields": {"description": "New."}}`), answer("Done."))
		addr := serveReal(t, e.App.Handler(), httpapi.ServeConfig{ReadTimeout: 200 * time.Millisecond})
		erika := e.As(wt.Erika)
		st := wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs", map[string]any{"configuration": 1,
			"messages": []map[string]string{{"role": "user", "content": "Improve it"}}}, http.StatusCreated))
		id := st.UUID
		if st.Pending == nil {
			t.Fatalf("run = %+v, want a pending decision", st)
		}
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/runs/"+id+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+wt.Erika)
		req.Header.Set("Accept", "text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("stream = %d", res.StatusCode)
		}
		// The behaviour under test is what happens once the timeout has passed.
		time.Sleep(3 * 200 * time.Millisecond)
		erika.Must("POST", "/api/runs/"+id+"/approval", wt.Approve{Approve: true, TurnDigest: st.Pending.TurnDigest}, http.StatusOK)
		body, err := io.ReadAll(res.Body)
		if err != nil || !bytes.Contains(body, []byte("event: end")) || !bytes.Contains(body, []byte("event: tool_write")) {
			t.Errorf("stream after ReadTimeout = %v, %q; want it to carry the run to its end", err, body)
		}
	})
}

// A body over the limit answers a clean 413.
func TestBodyOverTheLimitAnswers413(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		big := `{"configuration": 1, "messages": [{"role": "user", "content": "` + strings.Repeat("a", httpapi.MaxBodyBytes) + `"}]}`
		r := e.As(wt.Erika).Do("POST", "/api/runs", big)
		if r.Status != http.StatusRequestEntityTooLarge || r.ErrorCode() != "body_too_large" {
			t.Errorf("POST /api/runs with %d bytes = %d %s, want 413 body_too_large", len(big), r.Status, r.Body)
		}
		if n := count(t, e, "runs"); n != 0 {
			t.Errorf("runs after the refused body = %d, want 0", n)
		}
	})
}

// One client address cannot hold all of the server's
// connections: beyond MaxClientConns it is answered 429 and closed, others
// are served, and it is served again once it closes one.
func TestOneClientCannotHoldAllConnections(t *testing.T) {
	e := wt.New(t, storetest.SQLite(t), wt.Site, nil)
	addr := serveReal(t, e.App.Handler(), httpapi.ServeConfig{MaxClientConns: 2})
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
		// A request on each proves the server accepted and counted it.
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("held connection: %v %v", res, err)
		}
		res.Body.Close()
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("third connection of one client = %v, %v; want 429 with Retry-After", res, err)
	}
	held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after closing a held connection: %v %v, want 200 again", res, err)
		}
		<-time.After(10 * time.Millisecond) // poll until the server has seen the close
	}
}
