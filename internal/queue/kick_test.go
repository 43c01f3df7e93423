package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// outbox stands for River's SQLite listener: it answers what is sent on
// notes, or the context's error once that ends.
type outbox struct {
	riverdriver.Listener // not called
	notes                chan *riverdriver.Notification
}

func (o *outbox) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	select {
	case n := <-o.notes:
		return n, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// A job this process committed reaches River's producers as an
// insert notification of its queue at once — also while the listener waits
// on the outbox — each queue once however many kicks; the outbox's own
// notifications pass through, and the caller's end ends the wait.
func TestAKickDeliversAnInsertNotificationOfItsQueueAtOnce(t *testing.T) {
	d := newKickDriver(riversqlite.New(nil))
	box := &outbox{notes: make(chan *riverdriver.Notification, 1)}
	l := &kickListener{Listener: box, d: d}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	d.kick(QueueChat)
	d.kick(QueueChat)
	n, err := l.WaitForNotification(ctx)
	if err != nil || n.Topic != "river_insert" || n.Payload != `{"queue":"chat"}` {
		t.Fatalf("after two kicks = %+v, %v; want one insert notification of the chat queue", n, err)
	}

	// A kick while the listener waits on the outbox interrupts that wait.
	got := make(chan *riverdriver.Notification, 1)
	go func() {
		n, err := l.WaitForNotification(ctx)
		if err != nil {
			t.Errorf("waiting: %v", err)
		}
		got <- n
	}()
	time.Sleep(20 * time.Millisecond) // let it wait on the outbox; the kick is delivered either way
	d.kick(QueueRuns)
	select {
	case n := <-got:
		if n == nil || n.Payload != `{"queue":"default"}` {
			t.Errorf("kicked during the wait = %+v, want the runs queue's insert", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a kick during the wait was not delivered")
	}

	// The outbox's notifications pass through unchanged.
	box.notes <- &riverdriver.Notification{Topic: "river_leadership", Payload: "x"}
	if n, err := l.WaitForNotification(ctx); err != nil || n.Topic != "river_leadership" || n.Payload != "x" {
		t.Errorf("from the outbox = %+v, %v", n, err)
	}

	// The caller's end ends the wait, with its error.
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	if _, err := l.WaitForNotification(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("after the caller's deadline = %v, want context.DeadlineExceeded", err)
	}
}
