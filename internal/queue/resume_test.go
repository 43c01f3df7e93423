package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"waymark/internal/queue"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// resumer fails the first failures attempts of every job, then answers
// the job's payload back as its outcome.
type resumer struct {
	failures int
	mu       sync.Mutex // guards tries
	tries    int
}

func (r *resumer) WorkResume(_ context.Context, payload json.RawMessage) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tries++
	if r.tries <= r.failures {
		return nil, errors.New("database is busy")
	}
	return map[string]json.RawMessage{"echo": payload}, nil
}

func (noChat) Work(context.Context, json.RawMessage) error { return nil }

type noChat struct{}

// outcome waits (at most 20 s) until resume job id is done.
func outcome(t *testing.T, q *queue.Queue, id int64) json.RawMessage {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, done, err := q.ResumeOutcome(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("resume job %d not done after 20s", id)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not a synchronisation
	}
}

// A resume job is worked on the chat queue and its
// handler's outcome is its recorded output; a handler's failure is retried
// within seconds, not River's default minutes; a job that fails every
// attempt is done without an output.
func TestResumeJobRecordsItsOutcomeAndRetriesFailuresQuickly(t *testing.T) {
	cases := []struct {
		name     string
		failures int
		want     string
	}{
		{"at once", 0, `{"echo": {"run": "r1"}}`},
		{"after two failures", 2, `{"echo": {"run": "r1"}}`},
		{"never", 99, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				q, err := queue.New(db, &queue.Config{ChatWorkers: 1, PollInterval: 20 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				if err := q.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
				h := &resumer{failures: c.failures}
				if err := q.Start(ctx, queue.Handlers{Chat: noChat{}, Resume: h}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = q.Stop(context.Background()) })
				var id int64
				began := time.Now()
				if err := q.InTx(ctx, func(tx *store.Tx) error {
					id, err = q.InsertResumeTx(ctx, tx, map[string]string{"run": "r1"})
					return err
				}); err != nil {
					t.Fatal(err)
				}
				out := outcome(t, q, id)
				if took := time.Since(began); took > 10*time.Second {
					t.Errorf("the job took %v, want its retries within seconds", took)
				}
				if c.want == "" {
					if out != nil {
						t.Errorf("a job that failed every attempt recorded %s", out)
					}
					return
				}
				var got, want any
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatalf("output %s: %v", out, err)
				}
				_ = json.Unmarshal([]byte(c.want), &want)
				if g, _ := json.Marshal(got); string(g) != mustJSON(want) {
					t.Errorf("output = %s, want %s", g, c.want)
				}
			})
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A queue with chat workers needs a resume handler as well.
func TestChatWorkersNeedAResumeHandler(t *testing.T) {
	q, err := queue.New(storetest.SQLite(t), &queue.Config{ChatWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background(), queue.Handlers{Chat: noChat{}}); !errors.Is(err, queue.ErrNoHandler) {
		t.Errorf("chat workers without a resume handler: Start = %v, want ErrNoHandler", err)
	}
}
