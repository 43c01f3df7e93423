package queue

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"waymark/internal/store"
)

// insertTopic and insertPayload are River's notification of an insert: the
// topic its producers listen on and the payload naming the queue (what
// River's NOTIFY sends on PostgreSQL and its SQLite driver writes to the
// river_notification outbox).
const insertTopic = "river_insert"

type insertPayload struct {
	Queue string `json:"queue"`
}

// kickDriver is River's SQLite driver whose listener also delivers, at once,
// an insert notification for every queue this process committed a job to
// (Queue.insertedIn). River's notifier then has that queue's producer fetch:
// a job inserted in the transaction of its decision or message is taken
// soon after the commit instead of at the workers' next poll (issue 15: on
// SQLite a chat job waited 6 ms on average for its pickup, a quarter of an
// answer). Jobs another process inserted still wake the workers at the
// listener's poll of the outbox (50 ms) or at the producers' own poll; so do
// these, should River ever read its notifications differently.
type kickDriver struct {
	*riversqlite.Driver
	mu      sync.Mutex
	pending map[string]bool // queues with a job committed since the listener last delivered them
	wake    chan struct{}
}

func newKickDriver(d *riversqlite.Driver) *kickDriver {
	return &kickDriver{Driver: d, pending: map[string]bool{}, wake: make(chan struct{}, 1)}
}

func (d *kickDriver) GetListener(p *riverdriver.GetListenenerParams) riverdriver.Listener {
	return &kickListener{Listener: d.Driver.GetListener(p), d: d}
}

// kick notes a job committed to queue and wakes the listener.
func (d *kickDriver) kick(queue string) {
	d.mu.Lock()
	d.pending[queue] = true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// next takes one queue with a committed job, if any.
func (d *kickDriver) next() (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for q := range d.pending {
		delete(d.pending, q)
		return q, true
	}
	return "", false
}

// kickListener is River's SQLite listener that first delivers the inserts
// of its own process (kickDriver).
type kickListener struct {
	riverdriver.Listener
	d *kickDriver
}

// WaitForNotification delivers an insert of this process if there is one,
// else waits as River's listener does; a kick interrupts that wait (or its
// read of the outbox), and the insert is delivered at once.
func (l *kickListener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	for {
		if q, ok := l.d.next(); ok {
			payload, err := json.Marshal(insertPayload{Queue: q})
			if err != nil {
				return nil, err
			}
			return &riverdriver.Notification{Topic: insertTopic, Payload: string(payload)}, nil
		}
		wctx, cancel := context.WithCancel(ctx)
		kicked := make(chan struct{})
		go func() {
			select {
			case <-l.d.wake:
				close(kicked)
				cancel()
			case <-wctx.Done():
			}
		}()
		n, err := l.Listener.WaitForNotification(wctx)
		cancel()
		select {
		case <-kicked:
			if err != nil && ctx.Err() == nil {
				continue // interrupted by a kick: deliver it
			}
		default:
		}
		return n, err
	}
}

// insertedIn has this process's workers look at queue as soon as tx, which
// inserted a job into it, committed (on SQLite with workers; on PostgreSQL
// River's listener hears every process's inserts).
func (q *Queue) insertedIn(tx *store.Tx, queue string) {
	if q.kicker != nil {
		tx.AfterCommit(func() { q.kicker.kick(queue) })
	}
}
