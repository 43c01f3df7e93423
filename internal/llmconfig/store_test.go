package llmconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"waymark/internal/secret"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestPutGetRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setup(t, db), context.Background()
		in := valid()
		in.Script = json.RawMessage(`[{"content":"hello"}]`)
		before := time.Now().Add(-time.Second)
		if err := b.store.Put(ctx, in); err != nil {
			t.Fatalf("Put: %v", err)
		}
		got, err := b.store.Get(ctx, 3)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if got.UpdatedAt.Before(before) || got.UpdatedAt.After(time.Now().Add(time.Second)) {
			t.Errorf("UpdatedAt = %v, want about now", got.UpdatedAt)
		}
		want := in
		want.APIKey, want.HasAPIKey, want.UpdatedAt = "", true, got.UpdatedAt
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Get = %+v\nwant  %+v", got, want)
		}
		byID, err := b.store.GetByIdentifier(ctx, "chat")
		if err != nil || !reflect.DeepEqual(byID, got) {
			t.Errorf("GetByIdentifier(chat) = %+v, %v, want %+v", byID, err, got)
		}

		// Put again with the same uid replaces every field.
		in.Name, in.Active, in.AllowedGroups, in.APIKey = "Chat 2", false, nil, ""
		if err := b.store.Put(ctx, in); err != nil {
			t.Fatalf("Put (update): %v", err)
		}
		list, err := b.store.List(ctx)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if len(list) != 1 || list[0].Name != "Chat 2" || list[0].Active || len(list[0].AllowedGroups) != 0 || list[0].HasAPIKey {
			t.Errorf("List after update = %+v, want one inactive \"Chat 2\" without groups or key", list)
		}
	})
}

func TestPutFillsDefaults(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setup(t, db), context.Background()
		c := Configuration{UID: 5, Identifier: "demo", ProviderType: ProviderDemo, ContextWindow: 8000}
		if err := b.store.Put(ctx, c); err != nil {
			t.Fatalf("Put: %v", err)
		}
		got, err := b.store.Get(ctx, 5)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if got.Privacy != PrivacyMetadata || got.MaxIterations != 20 || string(got.Script) != "[]" ||
			got.AllowedGroups == nil || got.ToolGroups == nil || got.HasAPIKey || got.TokenBudget != 0 {
			t.Errorf("Get = %+v, want privacy metadata, 20 iterations, script [], empty lists, no key", got)
		}
	})
}

func TestGetUnknownIsNotFound(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setup(t, db), context.Background()
		if _, err := b.store.Get(ctx, 99); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(99) error = %v, want ErrNotFound", err)
		}
		if _, err := b.store.GetByIdentifier(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetByIdentifier(nope) error = %v, want ErrNotFound", err)
		}
		if _, err := b.store.APIKey(ctx, 99); !errors.Is(err, ErrNotFound) {
			t.Errorf("APIKey(99) error = %v, want ErrNotFound", err)
		}
		if err := b.store.SetAPIKey(ctx, 99, "k"); !errors.Is(err, ErrNotFound) {
			t.Errorf("SetAPIKey(99) error = %v, want ErrNotFound", err)
		}
		if list, err := b.store.List(ctx); err != nil || len(list) != 0 {
			t.Errorf("List = %v, %v, want none", list, err)
		}
	})
}

func TestStoredRowNeverHoldsAPIKeyPlaintext(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setup(t, db), context.Background()
		if err := b.store.Put(ctx, valid()); err != nil {
			t.Fatalf("Put: %v", err)
		}
		var sealed string
		if err := db.QueryRow(ctx, "SELECT api_key_sealed FROM configurations WHERE uid = 3").Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sealed, "v1:") || strings.Contains(sealed, testAPIKey) {
			t.Errorf("api_key_sealed = %q, want a v1: sealed value without the key", sealed)
		}
		if opened, err := b.box.Open(sealed); err != nil || opened != testAPIKey {
			t.Errorf("box.Open(api_key_sealed) = %q, %v, want the key", opened, err)
		}
		if row := rawRow(t, db, 3); strings.Contains(row, testAPIKey) {
			t.Errorf("stored row contains the API key: %s", row)
		}
		if err := b.store.SetAPIKey(ctx, 3, "sk-other-key-2"); err != nil {
			t.Fatalf("SetAPIKey: %v", err)
		}
		if row := rawRow(t, db, 3); strings.Contains(row, "sk-other-key-2") {
			t.Errorf("stored row after SetAPIKey contains the API key: %s", row)
		}
	})
}

// rawRow renders every column of the configuration row as text.
func rawRow(t *testing.T, db *store.DB, uid int64) string {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT * FROM configurations WHERE uid = ?", uid)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		t.Fatalf("no row for configuration %d", uid)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for i, v := range vals {
		if bs, ok := v.([]byte); ok {
			v = string(bs)
		}
		fmt.Fprintf(&sb, "%s=%v ", cols[i], v)
	}
	return sb.String()
}

func TestAPIKeyDecryptsStoredKey(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setup(t, db), context.Background()
		if err := b.store.Put(ctx, valid()); err != nil {
			t.Fatalf("Put: %v", err)
		}
		if got, err := b.store.APIKey(ctx, 3); err != nil || got != testAPIKey {
			t.Errorf("APIKey = %q, %v, want %q", got, err, testAPIKey)
		}
		if c, _ := b.store.Get(ctx, 3); c.APIKey != "" || !c.HasAPIKey {
			t.Errorf("Get returned APIKey %q, HasAPIKey %v; want no key and true", c.APIKey, c.HasAPIKey)
		}
		if err := b.store.SetAPIKey(ctx, 3, "sk-rotated"); err != nil {
			t.Fatalf("SetAPIKey: %v", err)
		}
		if got, err := b.store.APIKey(ctx, 3); err != nil || got != "sk-rotated" {
			t.Errorf("APIKey after SetAPIKey = %q, %v, want sk-rotated", got, err)
		}
		if err := b.store.SetAPIKey(ctx, 3, ""); err != nil {
			t.Fatalf("SetAPIKey(\"\"): %v", err)
		}
		if got, err := b.store.APIKey(ctx, 3); err != nil || got != "" {
			t.Errorf("APIKey after removal = %q, %v, want empty", got, err)
		}
		if c, _ := b.store.Get(ctx, 3); c.HasAPIKey {
			t.Errorf("HasAPIKey after removal = true")
		}
	})
}

func TestAPIKeyWithAnotherSecretKeyFails(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setup(t, db), context.Background()
		if err := b.store.Put(ctx, valid()); err != nil {
			t.Fatalf("Put: %v", err)
		}
		other, _ := secret.New(make([]byte, secret.KeySize))
		got, err := New(db, other, nil).APIKey(ctx, 3)
		if !errors.Is(err, secret.ErrUnsealFailed) || got != "" {
			t.Errorf("APIKey with another secret key = %q, %v, want secret.ErrUnsealFailed", got, err)
		}
	})
}

func TestConfigurationJSONOmitsAPIKey(t *testing.T) {
	t.Parallel()
	c := valid()
	c.HasAPIKey = true
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), testAPIKey) || strings.Contains(string(data), `"apiKey"`) {
		t.Errorf("JSON %s contains the API key", data)
	}
	if !strings.Contains(string(data), `"hasApiKey":true`) || !strings.Contains(string(data), `"contextWindow":32000`) {
		t.Errorf("JSON %s lacks hasApiKey or camelCase fields", data)
	}
}
