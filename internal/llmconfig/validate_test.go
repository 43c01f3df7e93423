package llmconfig

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestPutRejectsInvalidConfigurationAndStoresNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		field  string
		change func(c *Configuration)
	}{
		{"uid", func(c *Configuration) { c.UID = 0 }},
		{"identifier", func(c *Configuration) { c.Identifier = "" }},
		{"identifier", func(c *Configuration) { c.Identifier = "Chat Bot" }},
		{"providerType", func(c *Configuration) { c.ProviderType = "anthropic" }},
		{"providerType", func(c *Configuration) { c.ProviderType = "" }},
		{"model", func(c *Configuration) { c.Model = "" }},
		{"baseUrl", func(c *Configuration) { c.BaseURL = "127.0.0.1:9999" }},
		{"baseUrl", func(c *Configuration) { c.BaseURL = "ftp://example.org/v1" }},
		{"script", func(c *Configuration) { c.Script = json.RawMessage(`{"not":"a list"}`) }},
		{"contextWindow", func(c *Configuration) { c.ContextWindow = 0 }},
		{"maxOutputTokens", func(c *Configuration) { c.MaxOutputTokens = -1 }},
		{"maxOutputTokens", func(c *Configuration) { c.MaxOutputTokens = c.ContextWindow }},
		{"privacy", func(c *Configuration) { c.Privacy = "secret" }},
		{"maxIterations", func(c *Configuration) { c.MaxIterations = -1 }},
		{"maxIterations", func(c *Configuration) { c.MaxIterations = 101 }},
		{"tokenBudget", func(c *Configuration) { c.TokenBudget = -5 }},
		{"priceInputPerMTok", func(c *Configuration) { c.PriceInputPerMTok = -0.01 }},
		{"priceOutputPerMTok", func(c *Configuration) { c.PriceOutputPerMTok = math.NaN() }},
		{"priceOutputPerMTok", func(c *Configuration) { c.PriceOutputPerMTok = 1e9 }},
		{"allowedGroups", func(c *Configuration) { c.AllowedGroups = []int64{1, 0} }},
		{"toolGroups", func(c *Configuration) { c.ToolGroups = []string{""} }},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setup(t, db), context.Background()
		for _, tc := range cases {
			c := valid()
			c.UID, c.Identifier = 20, "fresh"
			tc.change(&c)
			err := b.store.Put(ctx, c)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("Put with bad %s: error %v, want a FieldError naming %s", tc.field, err, tc.field)
			}
			if strings.Contains(err.Error(), testAPIKey) {
				t.Errorf("Put with bad %s: error %q contains the API key", tc.field, err)
			}
			if list, err := b.store.List(ctx); err != nil || len(list) != 0 {
				t.Errorf("Put with bad %s stored %d configurations (%v), want none", tc.field, len(list), err)
			}
		}
	})
}

func TestPutInvalidUpdateKeepsStoredConfiguration(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setup(t, db), context.Background()
		if err := b.store.Put(ctx, valid()); err != nil {
			t.Fatal(err)
		}
		before, _ := b.store.Get(ctx, 3)
		bad := valid()
		bad.Name, bad.APIKey, bad.ContextWindow = "changed", "sk-new", -1
		if err := b.store.Put(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("Put(bad update) error = %v, want ErrInvalid", err)
		}
		after, _ := b.store.Get(ctx, 3)
		if !reflect.DeepEqual(before, after) {
			t.Errorf("invalid update changed the configuration: %+v -> %+v", before, after)
		}
		if key, _ := b.store.APIKey(ctx, 3); key != testAPIKey {
			t.Errorf("invalid update changed the API key to %q", key)
		}
	})
}

func TestPutRejectsDuplicateIdentifier(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setup(t, db), context.Background()
		if err := b.store.Put(ctx, valid()); err != nil {
			t.Fatal(err)
		}
		dup := valid()
		dup.UID, dup.Name = 4, "Other"
		if err := b.store.Put(ctx, dup); err == nil {
			t.Fatalf("Put of a second configuration with identifier chat succeeded")
		}
		if list, _ := b.store.List(ctx); len(list) != 1 || list[0].UID != 3 {
			t.Errorf("List after duplicate = %+v, want only configuration 3", list)
		}
	})
}

func TestValidateAcceptsProvidersWithoutModel(t *testing.T) {
	t.Parallel()
	for _, p := range []ProviderType{ProviderDemo, ProviderScript} {
		c := Configuration{UID: 1, Identifier: "x", ProviderType: p, ContextWindow: 100}
		if err := Validate(c); err != nil {
			t.Errorf("Validate(%s without model) = %v, want nil", p, err)
		}
	}
	c := valid()
	c.BaseURL = ""
	if err := Validate(c); err != nil {
		t.Errorf("Validate(openai without base URL) = %v, want nil (client default)", err)
	}
}
