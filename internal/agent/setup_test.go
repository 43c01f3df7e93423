package agent_test

import (
	"context"
	"testing"
	"time"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/llm/openai"
	"waymark/internal/llm/providers"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/secret"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// Users of the seed.
const (
	admin    = 1
	erika    = 2 // editor, initiator of most runs
	paula    = 3 // editor with the approve grant
	otto     = 4 // editor without grants
	cfgPlain = 1 // configuration without four-eyes
	cfgFour  = 2 // configuration with requireSecondApprover
)

type env struct {
	db      *store.DB
	rt      *agent.Runtime
	runs    *run.Store
	configs *llmconfig.Store
	tools   *tool.Registry
	srv     *llmtest.Server
	clk     *clock.Fake
	// providers and cfg build e.rt (runtime); withQueue rebuilds it with a queue.
	providers agent.ProviderFunc
	cfg       agent.Config
	// beforeWrite, when set, runs where agent.Config.Test.BeforeWrite runs.
	beforeWrite func()
}

// runtime builds a runtime on e's stores with e.providers and cfg.
func (e *env) runtime(t testing.TB, cfg agent.Config) *agent.Runtime {
	t.Helper()
	rt, err := agent.New(agent.Deps{DB: e.db, Runs: e.runs, Configs: e.configs, Tools: e.tools, Providers: e.providers}, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// setup seeds users, a page and two configurations on the scripted server
// and returns a runtime on them.
func setup(t *testing.T, db *store.DB, stream bool, replies ...llmtest.Reply) *env {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(ctx, q, args...); err != nil {
			t.Fatalf("seed %q: %v", q, err)
		}
	}
	mustExec(`INSERT INTO be_groups (uid, title, tables_select, tables_modify, non_exclude_fields, languages, mounts)
		VALUES (1, 'Editors', '["pages","tt_content"]', '["pages","tt_content"]', '["pages:description","pages:seoTitle"]', '[0,1]', '[1]')`)
	for _, u := range []struct {
		uid    int64
		name   string
		admin  bool
		grants string
	}{{admin, "admin", true, "[]"}, {erika, "erika", false, "[]"}, {paula, "paula", false, `["approve"]`}, {otto, "otto", false, "[]"}} {
		mustExec(`INSERT INTO be_users (uid, username, admin, backend_language, group_uids, grants) VALUES (?, ?, ?, 'en', '[1]', ?)`,
			u.uid, u.name, u.admin, u.grants)
	}
	if err := content.PutTx(ctx, db, content.Record{Table: "pages", UID: 1, Owner: erika, Group: 1,
		Perms: content.Perms{User: 31, Group: 27}, Fields: map[string]string{"title": "Home", "description": ""}}, 0); err != nil {
		t.Fatal(err)
	}
	if err := content.PutTx(ctx, db, content.Record{Table: "tt_content", UID: 100, PID: 1,
		Fields: map[string]string{"CType": "text", "header": "Welcome", "bodytext": "Hello there"}}, 0); err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(make([]byte, secret.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t, replies...)
	configs := llmconfig.New(db, box, nil)
	for _, c := range []llmconfig.Configuration{
		{UID: cfgPlain, Identifier: "chat", Name: "Chat", Active: true, ProviderType: llmconfig.ProviderOpenAI, BaseURL: srv.URL(),
			APIKey: "sk-test-secret", Model: "m", ContextWindow: 32000, MaxOutputTokens: 1000, AllowedGroups: []int64{1}},
		{UID: cfgFour, Identifier: "four-eyes", Name: "Four eyes", Active: true, ProviderType: llmconfig.ProviderOpenAI, BaseURL: srv.URL(),
			APIKey: "sk-test-secret", Model: "m", ContextWindow: 32000, MaxOutputTokens: 1000, AllowedGroups: []int64{1}, RequireSecondApprover: true},
	} {
		if err := configs.Put(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	checker := access.NewChecker(db, nil, nil)
	reg := tool.NewRegistry(db, nil)
	if err := tool.RegisterBuiltins(reg, db, nil, nil, content.NewWriter(db, nil, checker, clk), checker); err != nil {
		t.Fatal(err)
	}
	runs := run.NewStore(db, clk)
	e := &env{db: db, runs: runs, configs: configs, tools: reg, srv: srv, clk: clk,
		providers: providers.New(configs, openai.Config{Backoff: func(int) time.Duration { return time.Millisecond }})}
	e.cfg = agent.Config{Clock: clk, Stream: stream, Test: agent.TestConfig{BeforeWrite: func() {
		if e.beforeWrite != nil {
			e.beforeWrite()
		}
	}}}
	e.rt = e.runtime(t, e.cfg)
	return e
}

func user(text string) []llm.Message { return []llm.Message{{Role: llm.RoleUser, Content: text}} }

func call(id, name, args string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}, Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5}}
}

func text(s string) llmtest.Reply {
	return llmtest.Reply{Content: s, Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5}}
}

func (e *env) status(t *testing.T, actor int64, id string) agent.Status {
	t.Helper()
	s, err := e.rt.Status(context.Background(), actor, id)
	if err != nil {
		t.Fatalf("Status(%s) = %v", id, err)
	}
	return s
}

func (e *env) field(t *testing.T, table string, uid int64, field string) string {
	t.Helper()
	r, err := content.Builtin{}.Get(context.Background(), e.db, table, uid)
	if err != nil {
		t.Fatal(err)
	}
	return r.Fields[field]
}

func (e *env) kinds(t *testing.T, id string) map[run.Kind]int {
	t.Helper()
	evs, err := e.runs.Events(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[run.Kind]int{}
	for _, ev := range evs {
		out[ev.Kind]++
	}
	return out
}

const description = "Nordlicht Digital builds fast, accessible websites for companies in Hamburg and the north: planning, design, development, hosting and support from one team."
