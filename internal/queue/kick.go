package queue

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

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
// soon after the commit instead of at the workers' next poll (on
// SQLite a chat job waited 6 ms on average for its pickup, a quarter of an
// answer). Jobs another process inserted still wake the workers at the
// listener's read of the outbox (paced: WaitForNotification) or at the
// producers' own poll; so do these, should River ever read its
// notifications differently.
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
	d    *kickDriver
	idle time.Duration // the wait after the last empty read of the outbox; River calls one wait at a time
}

// The pace of the listener's reads of River's outbox (river_notification):
// River's SQLite listener reads it every 50 ms, which kept an idle `waymark
// serve` at 1.5 % of a core on its own. Here a read that finds nothing
// doubles the wait before the next one, from outboxPollMin up to
// outboxPollMax, and a notification found starts again from the shortest:
// an installation that inserts from another process (`serve --workers 0`
// beside a `worker`) still hears a busy stream of inserts within 50 ms, an
// idle process reads once a second (idle `serve`: 8.9 % of a core before,
// 0.85 % with this and DefaultSQLitePoll). This process's own inserts never wait
// for a read (kick).
const (
	outboxPollMin = 50 * time.Millisecond
	outboxPollMax = time.Second
	// outboxRead bounds one read of River's listener: shorter than its own
	// 50 ms wait after an empty read, so that it reads once.
	outboxRead = 40 * time.Millisecond
)

// WaitForNotification delivers an insert of this process if there is one,
// else reads River's outbox at the pace above; a kick interrupts a read or
// a wait, and the insert is delivered at once.
func (l *kickListener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	for {
		if q, ok := l.d.next(); ok {
			l.idle = 0
			payload, err := json.Marshal(insertPayload{Queue: q})
			if err != nil {
				return nil, err
			}
			return &riverdriver.Notification{Topic: insertTopic, Payload: string(payload)}, nil
		}
		rctx, cancel := context.WithTimeout(ctx, outboxRead)
		kicked := make(chan struct{})
		go func() {
			select {
			case <-l.d.wake:
				close(kicked)
				cancel()
			case <-rctx.Done():
			}
		}()
		n, err := l.Listener.WaitForNotification(rctx)
		cancel()
		select {
		case <-kicked:
			if ctx.Err() == nil {
				continue // interrupted by a kick: deliver it
			}
		default:
		}
		if err == nil || ctx.Err() != nil || !errors.Is(rctx.Err(), context.DeadlineExceeded) {
			l.idle = 0
			return n, err
		}
		// The read found nothing: wait, longer each time, or for a kick.
		l.idle = min(max(2*l.idle, outboxPollMin), outboxPollMax)
		t := time.NewTimer(l.idle)
		select {
		case <-l.d.wake: // a kick: the loop delivers it
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		t.Stop()
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
