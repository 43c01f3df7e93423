package run_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestCreateStoresTheRunAsGiven(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		id := uuid.NewString()
		want := run.Run{UUID: id, Configuration: 3, Initiator: 7, Status: run.StatusRunning,
			LeaseOwner: "sync:web-1", LeaseExpiresAt: t0.Add(lease), AllowedTools: nil,
			Usage: run.Usage{PromptTokens: 1}}
		err := b.db.InTx(b.ctx, func(tx *store.Tx) error { return b.store.CreateTx(b.ctx, tx, want, run.Flush{}) })
		if err != nil {
			t.Fatalf("CreateTx: %v", err)
		}
		want.CreatedAt, want.UpdatedAt = t0, t0
		if got := b.get(t, id); !reflect.DeepEqual(got, want) {
			t.Errorf("Get = %+v\nwant %+v", got, want)
		}
		q := b.get(t, b.queued(t))
		if q.Status != run.StatusQueued || string(q.Request) != `{"messages":[{"role":"user","content":"hi"}]}` ||
			!reflect.DeepEqual(q.AllowedTools, []string{"read_page"}) {
			t.Errorf("queued run = %+v", q)
		}
	})
}

func TestCreateRefusesBadRunsAndStoresNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		req := []byte(`{}`)
		cases := map[string]run.Run{
			"not a uuid":         {UUID: "run-1", Status: run.StatusQueued, Request: req},
			"terminal status":    {UUID: uuid.NewString(), Status: run.StatusCompleted, Request: req},
			"waiting status":     {UUID: uuid.NewString(), Status: run.StatusWaitingForInput, Request: req},
			"queued no request":  {UUID: uuid.NewString(), Status: run.StatusQueued},
			"queued with lease":  {UUID: uuid.NewString(), Status: run.StatusQueued, Request: req, LeaseOwner: "w"},
			"running no owner":   {UUID: uuid.NewString(), Status: run.StatusRunning, LeaseExpiresAt: t0.Add(time.Hour)},
			"running lease past": {UUID: uuid.NewString(), Status: run.StatusRunning, LeaseOwner: "w", LeaseExpiresAt: t0},
			"reason preset":      {UUID: uuid.NewString(), Status: run.StatusQueued, Request: req, Reason: run.ReasonCompleted},
			"request not JSON":   {UUID: uuid.NewString(), Status: run.StatusQueued, Request: []byte("{")},
		}
		for name, r := range cases {
			if err := b.store.Create(b.ctx, r); !errors.Is(err, run.ErrInvalid) {
				t.Errorf("Create(%s) = %v, want ErrInvalid", name, err)
			}
		}
		if n := b.count(t, "SELECT COUNT(*) FROM runs"); n != 0 {
			t.Errorf("%d runs stored after refused creates, want 0", n)
		}
		id := b.queued(t)
		if err := b.store.Create(b.ctx, run.Run{UUID: id, Status: run.StatusQueued, Request: req}); err == nil {
			t.Error("Create of a duplicate uuid succeeded")
		}
	})
}

func TestGetUnknownRunIsNotFound(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		if _, err := b.store.Get(b.ctx, uuid.NewString()); !errors.Is(err, run.ErrNotFound) {
			t.Errorf("Get(unknown) = %v, want ErrNotFound", err)
		}
		if won, err := b.store.Cancel(b.ctx, uuid.NewString()); won || err != nil {
			t.Errorf("Cancel(unknown) = %v, %v; want a loss", won, err)
		}
	})
}
