package llmconfig

import (
	"context"
	"errors"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestCreateTakesTheNextUIDAndRefusesTakenOnes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setup(t, db), context.Background()
		addGroup(t, db, 1, "[]")
		c := valid()
		c.UID = 0
		got, err := b.store.Create(ctx, c)
		if err != nil || got.UID != 1 || !got.HasAPIKey || got.APIKey != "" {
			t.Fatalf("Create = %+v, %v, want uid 1 with a sealed key and no plaintext", got, err)
		}
		if key, err := b.store.APIKey(ctx, 1); err != nil || key != testAPIKey {
			t.Errorf("APIKey = %q, %v, want the key", key, err)
		}
		c.Identifier = "other"
		if got, err = b.store.Create(ctx, c); err != nil || got.UID != 2 {
			t.Errorf("second Create = %+v, %v, want uid 2", got, err)
		}
		for _, tc := range []struct {
			name string
			c    Configuration
		}{
			{"taken identifier", func() Configuration { c := valid(); c.UID = 0; return c }()},
			{"taken uid", func() Configuration { c := valid(); c.UID, c.Identifier = 2, "third"; return c }()},
		} {
			if _, err := b.store.Create(ctx, tc.c); !errors.Is(err, ErrTaken) {
				t.Errorf("Create(%s) = %v, want ErrTaken", tc.name, err)
			}
		}
		bad := valid()
		bad.UID, bad.Identifier, bad.AllowedGroups = 0, "third", []int64{1, 7}
		var fe *FieldError
		if _, err := b.store.Create(ctx, bad); !errors.As(err, &fe) || fe.Field != "allowedGroups" {
			t.Errorf("Create with an unknown group = %v, want a FieldError on allowedGroups", err)
		}
		if list, _ := b.store.List(ctx); len(list) != 2 {
			t.Errorf("List = %d configurations after refusals, want 2", len(list))
		}
	})
}

func TestUpdateKeepsReplacesOrRemovesTheKey(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setup(t, db), context.Background()
		addGroup(t, db, 1, "[]")
		if err := b.store.Put(ctx, valid()); err != nil {
			t.Fatal(err)
		}
		c := valid()
		c.APIKey, c.Name = "ignored-without-key-pointer", "Renamed"
		empty, other := "", "sk-other-0042"
		for _, step := range []struct {
			name string
			key  *string
			want string
		}{
			{"nil keeps", nil, testAPIKey},
			{"a key replaces", &other, other},
			{"empty removes", &empty, ""},
		} {
			got, err := b.store.Update(ctx, c, step.key)
			if err != nil || got.Name != "Renamed" || got.HasAPIKey != (step.want != "") {
				t.Errorf("Update (%s) = %+v, %v", step.name, got, err)
			}
			if key, err := b.store.APIKey(ctx, 3); err != nil || key != step.want {
				t.Errorf("after Update (%s): APIKey = %q, %v, want %q", step.name, key, err, step.want)
			}
		}
		c.UID = 99
		if _, err := b.store.Update(ctx, c, nil); !errors.Is(err, ErrNotFound) {
			t.Errorf("Update(99) = %v, want ErrNotFound", err)
		}
		c.UID, c.ContextWindow = 3, 0
		if _, err := b.store.Update(ctx, c, &other); !errors.Is(err, ErrInvalid) {
			t.Errorf("Update with contextWindow 0 = %v, want ErrInvalid", err)
		}
		if got, _ := b.store.Get(ctx, 3); got.ContextWindow != 32000 || got.HasAPIKey {
			t.Errorf("a refused Update changed the configuration: %+v", got)
		}
	})
}
