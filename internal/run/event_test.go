package run_test

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestEventSequencesStayStrictlyIncreasingUnderConcurrentAppenders(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		const appenders, each = 20, 5
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			mu    sync.Mutex // guards errs
			errs  []error
		)
		for i := range appenders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for j := range each {
					if _, err := b.store.AppendEvent(b.ctx, id, run.EventProgress,
						map[string]any{"current": i, "total": j}, run.PrivacyFull); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("%d appends failed, first: %v", len(errs), errs[0])
		}
		evs, err := b.store.Events(b.ctx, id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != appenders*each {
			t.Fatalf("%d events stored, want %d", len(evs), appenders*each)
		}
		for i, ev := range evs {
			if ev.Sequence != int64(i+1) {
				t.Fatalf("event %d has sequence %d, want %d", i, ev.Sequence, i+1)
			}
		}
	})
}

func TestEventsPageBySequenceAndLatestFindsTheNewestOfAKind(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		for i, k := range []run.Kind{run.EventLineage, run.EventHighlight, run.EventProgress, run.EventHighlight} {
			b.clk.Advance(time.Second)
			ev, err := b.store.AppendEvent(b.ctx, id, k, map[string]any{"uid": i}, run.PrivacyMetadata)
			if err != nil || ev.Sequence != int64(i+1) || !ev.CreatedAt.Equal(b.clk.Now()) {
				t.Fatalf("AppendEvent %d = %+v, %v", i, ev, err)
			}
		}
		page, err := b.store.Events(b.ctx, id, 1, 2)
		if err != nil || len(page) != 2 || page[0].Sequence != 2 || page[1].Sequence != 3 || page[1].Kind != run.EventProgress {
			t.Fatalf("Events(after 1, limit 2) = %+v, %v", page, err)
		}
		if !page[0].CreatedAt.Equal(t0.Add(2 * time.Second)) {
			t.Errorf("event time %v, want %v", page[0].CreatedAt, t0.Add(2*time.Second))
		}
		ev, ok, err := b.store.LatestEvent(b.ctx, id, run.EventHighlight)
		if err != nil || !ok || ev.Sequence != 4 || string(ev.Payload) != `{"uid":3}` {
			t.Errorf("LatestEvent(highlight) = %+v %s, %v, %v", ev, ev.Payload, ok, err)
		}
		if _, ok, err := b.store.LatestEvent(b.ctx, id, run.EventApproval); ok || err != nil {
			t.Errorf("LatestEvent(approval) = %v, %v; want none", ok, err)
		}
		if evs, err := b.store.Events(b.ctx, uuid.NewString(), 0, 0); err != nil || len(evs) != 0 {
			t.Errorf("Events(unknown) = %v, %v; want none", evs, err)
		}
	})
}

func TestEventsOfKindsAndFirstReadsTheKindsAndTheOpeningEventInOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		for i, k := range []run.Kind{run.EventRequest, run.EventLLM, run.EventProgress, run.EventTool, run.EventNotice, run.EventProgress} {
			if _, err := b.store.AppendEvent(b.ctx, id, k, map[string]any{"uid": i}, run.PrivacyMetadata); err != nil {
				t.Fatalf("AppendEvent %d: %v", i, err)
			}
		}
		evs, err := b.store.EventsOfKindsAndFirst(b.ctx, id, run.EventProgress, run.EventNotice)
		var got []int64
		for _, e := range evs {
			got = append(got, e.Sequence)
		}
		if err != nil || fmt.Sprint(got) != "[1 3 5 6]" || evs[0].Kind != run.EventRequest {
			t.Fatalf("EventsOfKindsAndFirst(progress, notice) = %v (%+v), %v; want sequences [1 3 5 6], the request first", got, evs, err)
		}
		if evs, err := b.store.EventsOfKindsAndFirst(b.ctx, id); err != nil || len(evs) != 1 || evs[0].Sequence != 1 {
			t.Errorf("EventsOfKindsAndFirst() = %+v, %v; want the first event alone", evs, err)
		}
		if evs, err := b.store.EventsOfKindsAndFirst(b.ctx, uuid.NewString(), run.EventProgress); err != nil || len(evs) != 0 {
			t.Errorf("EventsOfKindsAndFirst(unknown) = %v, %v; want none", evs, err)
		}
	})
}

// GetWithEvents reads in one statement what Get and EventsOfKindsAndFirst
// read in two.
func TestGetWithEventsReadsTheRunAndTheEventsOfEventsOfKindsAndFirst(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		for i, k := range []run.Kind{run.EventRequest, run.EventLLM, run.EventProgress, run.EventTool, run.EventNotice, run.EventProgress} {
			if _, err := b.store.AppendEvent(b.ctx, id, k, map[string]any{"uid": i}, run.PrivacyMetadata); err != nil {
				t.Fatalf("AppendEvent %d: %v", i, err)
			}
		}
		for _, kinds := range [][]run.Kind{{run.EventProgress, run.EventNotice}, nil} {
			before := db.Statements()
			r, err := b.store.GetWithEvents(b.ctx, id, kinds...)
			if err != nil {
				t.Fatalf("GetWithEvents(%v): %v", kinds, err)
			}
			if n := db.Statements() - before; n != 1 {
				t.Errorf("GetWithEvents ran %d statements, want 1", n)
			}
			want := b.get(t, id)
			evs, err := b.store.EventsOfKindsAndFirst(b.ctx, id, kinds...)
			if err != nil {
				t.Fatal(err)
			}
			want.Events = evs
			if !reflect.DeepEqual(r, want) {
				t.Errorf("GetWithEvents(%v) =\n%+v\nwant (Get and EventsOfKindsAndFirst)\n%+v", kinds, r, want)
			}
		}
		if _, err := b.store.GetWithEvents(b.ctx, uuid.NewString(), run.EventProgress); !errors.Is(err, run.ErrNotFound) {
			t.Errorf("GetWithEvents(unknown) = %v, want ErrNotFound", err)
		}
	})
}

func TestAppendEventInTxCommitsWithTheTransition(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		boom := errors.New("boom")
		err := b.db.InTx(b.ctx, func(tx *store.Tx) error {
			if won, err := b.store.SettleTx(b.ctx, tx, id, run.Settlement{Owner: owner, Status: run.StatusCompleted, Reason: run.ReasonCompleted}, run.Flush{}); !won || err != nil {
				t.Fatalf("SettleTx = %v, %v", won, err)
			}
			if _, err := b.store.AppendEventTx(b.ctx, tx, id, run.NewEvent{Kind: run.EventStatus, Payload: map[string]any{"status": "completed"}}, run.PrivacyNone); err != nil {
				t.Fatalf("AppendEventTx: %v", err)
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx = %v", err)
		}
		if r := b.get(t, id); r.Status != run.StatusRunning || len(b.rawPayloads(t, id)) != 0 {
			t.Errorf("after rollback: status %s, events %v; want running and none", r.Status, b.rawPayloads(t, id))
		}
		// The sequence counter rolled back too: the next event is 1.
		if ev, err := b.store.AppendEvent(b.ctx, id, run.EventStatus, nil, run.PrivacyNone); err != nil || ev.Sequence != 1 {
			t.Errorf("AppendEvent after rollback = %+v, %v; want sequence 1", ev, err)
		}
	})
}

func TestAppendEventRefusesBadInputAndStoresNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := b.in(t, run.StatusRunning)
		bad := []struct {
			name    string
			kind    run.Kind
			payload any
			privacy run.Privacy
		}{
			{"unknown kind", "dropped", nil, run.PrivacyFull},
			{"array payload", run.EventTool, []string{"a"}, run.PrivacyFull},
			{"string payload", run.EventTool, "text", run.PrivacyFull},
			{"unknown privacy", run.EventTool, nil, "secret"},
			{"unmarshalable", run.EventTool, map[string]any{"f": func() {}}, run.PrivacyFull},
		}
		for _, c := range bad {
			if _, err := b.store.AppendEvent(b.ctx, id, c.kind, c.payload, c.privacy); !errors.Is(err, run.ErrInvalid) {
				t.Errorf("AppendEvent(%s) = %v, want ErrInvalid", c.name, err)
			}
		}
		if _, err := b.store.AppendEvent(b.ctx, uuid.NewString(), run.EventTool, nil, run.PrivacyFull); !errors.Is(err, run.ErrNotFound) {
			t.Errorf("AppendEvent(unknown run) = %v, want ErrNotFound", err)
		}
		if n := b.count(t, "SELECT COUNT(*) FROM run_events"); n != 0 {
			t.Errorf("%d events stored after refused appends, want 0", n)
		}
	})
}
