// Package adr228_test proves ADR-228 (shared/spec/000_9e14e59edf235a42.txt)
// through the HTTP API: one file per item of the decision, tests named after
// the statements of spec/CHECKLIST.md they prove.
package adr228_test

import (
	"context"
	"net/http"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	wt "waymark/internal/waymarktest"
)

// processSite adds to wt.Site a first-party backend source with an approved
// process skill "seo" (uid 12, tools read_page, update_page_metadata,
// set_progress, highlight_record) attached to both configurations, a plain
// approved skill "tone" (uid 13), and enables highlight_record.
const processSite = wt.Site + `
skillSources:
  - {uid: 2, type: backend, title: Site, trustLevel: first_party}
skills:
  - uid: 12
    source: 2
    identifier: seo
    enabled: true
    markdown: "---\nname: SEO optimieren\ndescription: Die Seite Schritt für Schritt für Suchmaschinen verbessern.\nprocess: true\nallowed-tools: [read_page, update_page_metadata, set_progress, highlight_record]\n---\nPROCESS-SEO-V1: Lies die Seite, schlage eine Änderung pro Schritt vor."
  - uid: 13
    source: 2
    identifier: tone
    enabled: true
    markdown: "---\nname: Tone\ndescription: Brand tone.\n---\nWrite warmly."
approvals:
  - {skill: 12, digest: current, approvedBy: 1}
  - {skill: 13, digest: current, approvedBy: 1}
attachments:
  - {configuration: 1, skill: 12, loadMode: always}
  - {configuration: 2, skill: 12, loadMode: always}
  - {configuration: 1, skill: 13, loadMode: on_demand}
tools:
  - {name: highlight_record, enabled: true}
`

const seoSkill = 12

func newEnv(t *testing.T, db *store.DB, opts *wt.Options) *wt.Env {
	t.Helper()
	return wt.New(t, db, processSite, opts)
}

func call(id, name, args string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

func calls(cs ...llm.ToolCall) llmtest.Reply { return llmtest.Reply{ToolCalls: cs} }

func answer(s string) llmtest.Reply { return llmtest.Reply{Content: s} }

// startSEO starts the seo process on page 1 (language 0) with
// configuration cfg, answered 201.
func startSEO(t *testing.T, c *wt.Client, cfg int64) wt.RunStatus {
	t.Helper()
	st, r := c.StartRun(wt.StartRun{Configuration: cfg, Messages: []wt.Message{{Role: "user", Content: "SEO bitte"}},
		Invocation: &wt.Invocation{Skill: seoSkill, Subject: &wt.Subject{Table: "pages", UID: 1}}})
	if r.Status != http.StatusCreated {
		t.Fatalf("POST /api/runs = %d, want 201: %s", r.Status, r.Body)
	}
	return st
}

// startSEOQueued is startSEO for a queued run (answered 201 before it is worked).
func startSEOQueued(t *testing.T, c *wt.Client, cfg int64) wt.RunStatus {
	t.Helper()
	return started(t, c, wt.StartRun{Configuration: cfg, Messages: []wt.Message{{Role: "user", Content: "SEO bitte"}},
		Invocation: &wt.Invocation{Skill: seoSkill, Subject: &wt.Subject{Table: "pages", UID: 1}}, Queued: true})
}

// started sends POST /api/runs and fails unless it is answered 201.
func started(t *testing.T, c *wt.Client, req wt.StartRun) wt.RunStatus {
	t.Helper()
	st, r := c.StartRun(req)
	if r.Status != http.StatusCreated {
		t.Fatalf("POST /api/runs = %d, want 201: %s", r.Status, r.Body)
	}
	return st
}

// continued sends the next turn, naming only its predecessor; queued puts
// the turn in the queue.
func continued(t *testing.T, c *wt.Client, cfg int64, pred string, queued bool) wt.RunStatus {
	t.Helper()
	return started(t, c, wt.StartRun{Configuration: cfg, PredecessorRunUUID: pred, Queued: queued,
		Messages: []wt.Message{{Role: "user", Content: "weiter"}}})
}

// digest is the turn digest of the run's pending decision.
func digest(t *testing.T, st wt.RunStatus) string {
	t.Helper()
	if st.Pending == nil {
		t.Fatalf("no pending decision: %+v", st)
	}
	return st.Pending.TurnDigest
}

func systemOf(msgs []llm.Message) string {
	if len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		return msgs[0].Content
	}
	return ""
}

// lineage returns the payload of the run's latest lineage event, or nil.
func lineage(t *testing.T, c *wt.Client, id string) *wt.Lineage {
	t.Helper()
	return c.Lineage(id)
}

func exec(t *testing.T, db *store.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(context.Background(), q, args...); err != nil {
		t.Fatal(err)
	}
}
