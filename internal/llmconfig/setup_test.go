package llmconfig

import (
	"bytes"
	"context"
	"testing"

	"waymark/internal/secret"
	"waymark/internal/store"
)

const testAPIKey = "sk-test-4f9c2e7d1b8a"

type bundle struct {
	db    *store.DB
	box   *secret.Box
	store *Store
}

func setup(t *testing.T, db *store.DB) bundle {
	t.Helper()
	box, err := secret.New(bytes.Repeat([]byte{7}, secret.KeySize))
	if err != nil {
		t.Fatalf("secret.New: %v", err)
	}
	return bundle{db: db, box: box, store: New(db, box, nil)}
}

// valid returns a configuration that passes validation.
func valid() Configuration {
	return Configuration{
		UID: 3, Identifier: "chat", Name: "Chat", Active: true,
		ProviderType: ProviderOpenAI, BaseURL: "http://127.0.0.1:9999/v1", APIKey: testAPIKey, Model: "m",
		ContextWindow: 32000, MaxOutputTokens: 2000, RequireSecondApprover: true,
		Privacy: PrivacyRedacted, SystemPrompt: "Du bist hilfsbereit.",
		AllowedGroups: []int64{1}, ToolGroups: []string{"content"}, MaxIterations: 12, TokenBudget: 50000,
	}
}

func exec(t *testing.T, db *store.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func addGroup(t *testing.T, db *store.DB, uid int64, subgroups string) {
	t.Helper()
	exec(t, db, "INSERT INTO be_groups (uid, title, subgroups) VALUES (?, ?, ?)", uid, "group", subgroups)
}

func addUser(t *testing.T, db *store.DB, uid int64, groups string, admin, disabled, service bool) {
	t.Helper()
	exec(t, db, "INSERT INTO be_users (uid, username, admin, disabled, service_account, group_uids) VALUES (?, ?, ?, ?, ?, ?)",
		uid, "user"+string(rune('a'+uid)), admin, disabled, service, groups)
}
