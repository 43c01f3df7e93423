package adr022_test

import (
	"context"
	"net/http"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// A conversation that can never start is refused at
// creation and creates nothing — a page uid that is 0, unknown or not
// showable by the user (404 alike), a service account opening one with a
// process skill, a configuration the user may not use (404 alike for
// unknown, inactive and not usable).
func TestAConversationThatCanNeverStartIsRefusedAtCreation(t *testing.T) {
	cases := []struct {
		name   string
		token  string
		body   map[string]any
		status int
		code   string
	}{
		{"page 0", wt.Erika, map[string]any{"page": 0, "language": 0}, 404, "not_found"},
		{"page 0 for an administrator", wt.Admin, map[string]any{"page": 0, "language": 0, "skill": seo}, 404, "not_found"},
		{"unknown page", wt.Erika, map[string]any{"page": 999, "language": 0}, 404, "not_found"},
		{"page outside the mounts", wt.Erika, map[string]any{"page": 30, "language": 0}, 404, "not_found"},
		{"service account with a process skill", wt.Robot, map[string]any{"page": 1, "language": 0, "skill": seo}, 409, "service_account"},
		{"unknown configuration", wt.Erika, map[string]any{"page": 1, "language": 0, "configuration": 99}, 404, "configuration_not_found"},
		{"inactive configuration", wt.Erika, map[string]any{"page": 1, "language": 0, "configuration": 3}, 404, "configuration_not_found"},
		{"configuration of other groups", wt.Erika, map[string]any{"page": 1, "language": 0, "configuration": 4}, 404, "configuration_not_found"},
		{"process on the four-eyes configuration", wt.Erika, map[string]any{"page": 1, "language": 0, "skill": seo, "configuration": 2},
			409, "second_approver_required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db)
				ctx := context.Background()
				for _, q := range []string{
					`INSERT INTO records (tbl, uid, pid, owner_uid, group_uid, perms_user, perms_group, perms_everybody, fields)
						VALUES ('pages', 30, 0, 2, 1, 31, 27, 1, '{"title":"Outside"}')`,
					`INSERT INTO configurations (uid, identifier, name, active, provider_type, context_window, allowed_groups)
						VALUES (3, 'off', 'Off', FALSE, 'demo', 32000, '[1]'), (4, 'others', 'Others', TRUE, 'demo', 32000, '[77]')`,
					`INSERT INTO skill_attachments (configuration_uid, skill_uid, load_mode) VALUES (2, 12, 'always')`,
				} {
					if _, err := db.Exec(ctx, q); err != nil {
						t.Fatal(err)
					}
				}
				r := e.As(c.token).Do("POST", "/api/conversations", c.body)
				if r.Status != c.status || r.ErrorCode() != c.code {
					t.Errorf("POST /api/conversations %v = %d %s, want %d %s", c.body, r.Status, r.Body, c.status, c.code)
				}
				var n int
				_ = db.QueryRow(ctx, "SELECT COUNT(*) FROM conversations").Scan(&n)
				if n != 0 {
					t.Errorf("a refused start created %d conversations", n)
				}
			})
		})
	}
}

// POST /api/conversations takes an optional configuration;
// the four-eyes configuration is reachable from the chat, and its card asks
// for a second person.
func TestTheFourEyesConfigurationIsReachableFromTheChat(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "x"}`), answer("ok"))
		erika := e.As(wt.Erika)
		conv, r := erika.StartConversation(wt.StartConversation{Page: 1, Configuration: 2})
		if r.Status != http.StatusCreated {
			t.Fatalf("POST /api/conversations = %d, want 201: %s", r.Status, r.Body)
		}
		if conv.Configuration != 2 {
			t.Fatalf("configuration = %v, want 2", conv.Configuration)
		}
		conv = said(t, e, erika, conv.ID, "Los")
		if conv.Status != "awaiting_approval" || conv.Card == nil || conv.Card.ApproveBlocked != "second_approver" {
			t.Fatalf("conversation on the four-eyes configuration = %+v", conv)
		}
		if r := erika.AnswerConversation(conv.ID, wt.Answer{TurnDigest: conv.Card.TurnDigest, Answer: "approve"}); r.Status != http.StatusConflict {
			t.Errorf("erika approving her own four-eyes card = %d %s, want 409", r.Status, r.Body)
		}
	})
}
