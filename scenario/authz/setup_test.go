// Package authz_test proves 's authorization items through the HTTP
// API: one file per item, tests named after the behaviour they prove. Every
// test runs on SQLite and, with WAYMARK_TEST_POSTGRES set, on PostgreSQL.
package authz_test

import (
	"context"
	"net/http"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	wt "waymark/internal/waymarktest"
)

// site has the seven kinds of caller of the issue: an administrator, editor
// A (erika, mounts [1], languages 0 and 1, also in the campaign group),
// editor B (bernd, mounts [50], language 1 only), a service account, and
// three holders of the approve grant — paula (erika's mounts and languages),
// vera (bernd's mounts and language) and lena (erika's mounts, language 1
// only). Configuration 1 "chat" and 2 "four-eyes" are open to groups 1-3;
// configuration 3 "campaign" (four-eyes) to the campaign group only,
// configuration 4 "admins" to administrators. Skills 12 (source 2, attached
// to configuration 1) and 13 (source 3, attached to 2) are approved.
const site = `
languages:
  - {uid: 0, title: English, locale: en}
  - {uid: 1, title: Deutsch, locale: de}
groups:
  - {uid: 1, title: Editors, tablesSelect: [pages, tt_content], tablesModify: [pages, tt_content],
     nonExcludeFields: ["pages:description", "pages:seoTitle", "pages:keywords"], languages: [0, 1], mounts: [1], subgroups: []}
  - {uid: 2, title: Others, tablesSelect: [pages, tt_content], tablesModify: [pages, tt_content],
     nonExcludeFields: ["pages:description", "pages:seoTitle", "pages:keywords"], languages: [1], mounts: [50], subgroups: []}
  - {uid: 3, title: German, tablesSelect: [pages, tt_content], tablesModify: [pages, tt_content],
     nonExcludeFields: ["pages:description", "pages:seoTitle", "pages:keywords"], languages: [1], mounts: [1], subgroups: []}
  - {uid: 4, title: Campaign, tablesSelect: [pages, tt_content], tablesModify: [pages, tt_content],
     nonExcludeFields: ["pages:description"], languages: [0, 1], mounts: [1], subgroups: []}
users:
  - {uid: 1, username: admin, token: token-admin-0001, admin: true, backendLanguage: en}
  - {uid: 2, username: erika, token: token-erika-0002, groups: [1, 4], backendLanguage: de}
  - {uid: 3, username: paula, token: token-paula-0003, groups: [1], grants: [approve], backendLanguage: en}
  - {uid: 4, username: bernd, token: token-bernd-0004, groups: [2], backendLanguage: de}
  - {uid: 5, username: robot, token: token-robot-0005, groups: [1], serviceAccount: true}
  - {uid: 6, username: vera, token: token-vera-00006, groups: [2], grants: [approve], backendLanguage: en}
  - {uid: 7, username: lena, token: token-lena-00007, groups: [3], grants: [approve], backendLanguage: de}
pages:
  - {uid: 1, pid: 0, title: Home, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 1}, fields: {description: ""}}
  - {uid: 2, pid: 1, title: About, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 1}, fields: {description: "Short."}}
  - {uid: 11, pid: 0, title: Startseite, language: 1, l10nParent: 1, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 1}, fields: {description: ""}}
  - {uid: 50, pid: 0, title: Elsewhere, owner: 4, group: 2, perms: {user: 31, group: 27, everybody: 1}, fields: {description: ""}}
  - {uid: 51, pid: 0, title: Anderswo, language: 1, l10nParent: 50, owner: 4, group: 2, perms: {user: 31, group: 27, everybody: 1}, fields: {description: ""}}
records:
  - {table: tt_content, uid: 100, pid: 1, language: 0, fields: {CType: text, header: Welcome, bodytext: "Hello there"}}
skillSources:
  - {uid: 2, type: backend, title: Site, trustLevel: first_party}
  - {uid: 3, type: backend, title: Other, trustLevel: first_party}
skills:
  - uid: 12
    source: 2
    identifier: tone
    enabled: true
    markdown: "---\nname: Tone\ndescription: Brand tone.\n---\nWrite warmly."
  - uid: 13
    source: 3
    identifier: brief
    enabled: true
    markdown: "---\nname: Brief\ndescription: Be brief.\n---\nWrite briefly."
approvals:
  - {skill: 12, digest: current, approvedBy: 1}
  - {skill: 13, digest: current, approvedBy: 1}
attachments:
  - {configuration: 1, skill: 12, loadMode: on_demand}
  - {configuration: 2, skill: 13, loadMode: on_demand}
configurations:
  - {uid: 1, identifier: chat, name: Chat, active: true, groups: [1, 2, 3],
     provider: {type: openai, baseUrl: "{{LLM}}", apiKey: sk-scenario-secret, model: m},
     contextWindow: 32000, maxOutputTokens: 1000, requireSecondApprover: false, privacy: full}
  - {uid: 2, identifier: four-eyes, name: Four eyes, active: true, groups: [1, 2, 3],
     provider: {type: openai, baseUrl: "{{LLM}}", apiKey: sk-scenario-secret, model: m},
     contextWindow: 32000, maxOutputTokens: 1000, requireSecondApprover: true, privacy: full}
  - {uid: 3, identifier: campaign, name: Campaign, active: true, groups: [4],
     provider: {type: openai, baseUrl: "{{LLM}}", apiKey: sk-scenario-secret, model: m},
     contextWindow: 32000, maxOutputTokens: 1000, requireSecondApprover: true, privacy: full}
  - {uid: 4, identifier: admins, name: Administrators, active: true, groups: [],
     provider: {type: openai, baseUrl: "{{LLM}}", apiKey: sk-scenario-secret, model: m},
     contextWindow: 32000, maxOutputTokens: 1000, requireSecondApprover: false, privacy: metadata}
`

// Tokens of the users of site.
const (
	admin = "token-admin-0001"
	erika = "token-erika-0002"
	paula = "token-paula-0003"
	bernd = "token-bernd-0004"
	robot = "token-robot-0005"
	vera  = "token-vera-00006"
	lena  = "token-lena-00007"
)

// unknownRun is a run uuid nobody created.
const unknownRun = "00000000-0000-4000-8000-000000000000"

func newEnv(t *testing.T, db *store.DB) *wt.Env {
	t.Helper()
	return wt.New(t, db, site, nil)
}

func call(id, name, args string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

// proposeDescription scripts a model reply that proposes a description of
// page; the reply after the decision is scripted by the test (done).
func proposeDescription(e *wt.Env, page string) {
	e.LLM.Add(call("c1", "update_page_metadata", `{"page": `+page+`, "fields": {"description": "A new description."}}`))
}

// done scripts the model's last reply of a run.
func done(e *wt.Env) { e.LLM.Add(llmtest.Reply{Content: "Done."}) }

// waitingRun starts a run of c on configuration cfg that proposes a new
// description of page and waits for its approval; it returns the status.
func waitingRun(t *testing.T, e *wt.Env, c *wt.Client, cfg int, page string) wt.RunStatus {
	t.Helper()
	proposeDescription(e, page)
	st := wt.Decode[wt.RunStatus](t, c.Must("POST", "/api/runs", map[string]any{"configuration": cfg,
		"messages": []map[string]string{{"role": "user", "content": "Confidential: improve the description of page " + page}}},
		http.StatusCreated))
	if st.Status != "waiting_for_approval" {
		t.Fatalf("run = %+v, want waiting_for_approval", st)
	}
	return st
}

func digest(t *testing.T, st wt.RunStatus) string {
	t.Helper()
	if st.Pending == nil {
		t.Fatalf("no pending decision: %+v", st)
	}
	return st.Pending.TurnDigest
}

func exec(t *testing.T, db *store.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(context.Background(), q, args...); err != nil {
		t.Fatal(err)
	}
}

// sameNotFound fails unless a and b are both 404 with byte-identical bodies.
func sameNotFound(t *testing.T, what string, a, b wt.Response) {
	t.Helper()
	if a.Status != http.StatusNotFound || b.Status != http.StatusNotFound || string(a.Body) != string(b.Body) {
		t.Errorf("%s: %d %s, want it to answer like an unknown run: %d %s", what, a.Status, a.Body, b.Status, b.Body)
	}
}
