package process_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/fixture"
	"waymark/internal/llmconfig"
	"waymark/internal/process"
	"waymark/internal/run"
	"waymark/internal/skill"
	"waymark/internal/store"
)

// Users of the site.
const (
	admin = 1 // administrator
	erika = 2 // editor (group 1: pages and content, English and German, mount 1)
	robot = 3 // service account in group 1
	lena  = 4 // German-only editor (group 2)
	pete  = 5 // editor who may read pages only (group 3)
	otto  = 6 // another editor of group 1
)

// Configurations of the site.
const (
	cfgChat   = 1 // groups 1–3
	cfgFour   = 2 // groups 1–3, requireSecondApprover
	cfgAdmins = 3 // administrators only
)

// Skills of the site (source 1 is first-party, 2 untrusted, 3 disabled).
const (
	seo          = 1  // approved process, tools [read_page]
	tidy         = 2  // another approved process
	voice        = 3  // approved plain skill
	disabled     = 4  // approved process, disabled
	untrusted    = 5  // approved process of the untrusted source (below the floor)
	offSource    = 6  // approved process of the disabled source
	edited       = 7  // approved process, edited by a test
	detached     = 8  // approved process attached to no configuration
	orphan       = 9  // approved process, orphaned by a test
	revocable    = 10 // approved process, revoked by a test
	switchable   = 11 // approved process, disabled by a test
	neverApprove = 12 // process never approved
)

var site = `
languages:
  - {uid: 0, title: English, locale: en}
  - {uid: 1, title: Deutsch, locale: de}
groups:
  - {uid: 1, title: Editors, tablesSelect: [pages, tt_content], tablesModify: [pages, tt_content], languages: [0, 1], mounts: [1]}
  - {uid: 2, title: German editors, tablesSelect: [pages, tt_content], tablesModify: [pages, tt_content], languages: [1], mounts: [1]}
  - {uid: 3, title: Page editors, tablesSelect: [pages], tablesModify: [pages], languages: [0, 1], mounts: [1]}
users:
  - {uid: 1, username: admin, admin: true}
  - {uid: 2, username: erika, groups: [1]}
  - {uid: 3, username: robot, groups: [1], serviceAccount: true}
  - {uid: 4, username: lena, groups: [2]}
  - {uid: 5, username: pete, groups: [3]}
  - {uid: 6, username: otto, groups: [1]}
pages:
  - {uid: 1, pid: 0, title: Home, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 1}}
  - {uid: 2, pid: 1, title: About, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 1}}
  - {uid: 11, pid: 0, title: Startseite, language: 1, l10nParent: 1, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 1}}
  - {uid: 3, pid: 1, title: Hidden, owner: 1, perms: {user: 31, group: 0, everybody: 0}}
  - {uid: 20, pid: 0, title: Intranet, owner: 1, group: 1, perms: {user: 31, group: 27, everybody: 0}}
records:
  - {table: tt_content, uid: 100, pid: 1, language: 0, fields: {CType: text, header: Welcome}}
  - {table: tt_content, uid: 101, pid: 1, language: 1, l10nParent: 100, fields: {CType: text, header: Willkommen}}
  - {table: tt_content, uid: 102, pid: 1, language: -1, fields: {CType: image, header: Office}}
  - {table: tt_content, uid: 103, pid: 0, language: 0, fields: {CType: text, header: Root level}}
  - {table: tt_content, uid: 104, pid: 1, language: 0, workspace: 1, fields: {CType: text, header: Draft}}
  - {table: tt_content, uid: 105, pid: 1, language: 0, deleted: true, fields: {CType: text, header: Gone}}
  - {table: tt_content, uid: 106, pid: 20, language: 0, fields: {CType: text, header: Internal}}
configurations:
  - {uid: 1, identifier: chat, groups: [1, 2, 3], provider: {type: demo}}
  - {uid: 2, identifier: four-eyes, groups: [1, 2, 3], provider: {type: demo}, requireSecondApprover: true}
  - {uid: 3, identifier: admins, groups: [], provider: {type: demo}}
skillSources:
  - {uid: 1, type: backend, title: House, trustLevel: first_party}
  - {uid: 2, type: backend, title: Internet, trustLevel: untrusted}
  - {uid: 3, type: backend, title: Switched off, trustLevel: first_party, enabled: false}
skills:
` + skills + `
approvals:
  - {skill: 1, digest: current, approvedBy: 1}
  - {skill: 2, digest: current, approvedBy: 1}
  - {skill: 3, digest: current, approvedBy: 1}
  - {skill: 4, digest: current, approvedBy: 1}
  - {skill: 5, digest: current, approvedBy: 1}
  - {skill: 6, digest: current, approvedBy: 1}
  - {skill: 7, digest: current, approvedBy: 1}
  - {skill: 8, digest: current, approvedBy: 1}
  - {skill: 9, digest: current, approvedBy: 1}
  - {skill: 10, digest: current, approvedBy: 1}
  - {skill: 11, digest: current, approvedBy: 1}
attachments:
` + attachments

// seoBody is the approved body of skill seo.
const seoBody = "Read the page, then propose one change per turn."

var skills = func() string {
	var b strings.Builder
	for _, k := range []struct {
		uid, source int64
		id          string
		enabled     bool
		process     bool
		body        string
	}{
		{seo, 1, "seo", true, true, seoBody}, {tidy, 1, "tidy", true, true, "Tidy up."},
		{voice, 1, "voice", true, false, "Write plainly."}, {disabled, 1, "disabled", false, true, "Off."},
		{untrusted, 2, "untrusted", true, true, "From the internet."}, {offSource, 3, "off-source", true, true, "Source off."},
		{edited, 1, "edited", true, true, "Before the edit."}, {detached, 1, "detached", true, true, "Nowhere."},
		{orphan, 1, "orphan", true, true, "Vanishes."}, {revocable, 1, "revocable", true, true, "Revoked later."},
		{switchable, 1, "switchable", true, true, "Switched off later."}, {neverApprove, 1, "never", true, true, "Unapproved."},
	} {
		b.WriteString("  - uid: " + itoa(k.uid) + "\n    source: " + itoa(k.source) + "\n    identifier: " + k.id +
			"\n    enabled: " + boolText(k.enabled) + "\n    markdown: |\n      ---\n      name: " + k.id +
			" skill\n      description: The " + k.id + " skill.\n")
		if k.process {
			b.WriteString("      process: true\n      allowed-tools: [read_page]\n")
		}
		b.WriteString("      ---\n      " + k.body + "\n")
	}
	return b.String()
}()

var attachments = func() string {
	var b strings.Builder
	for _, k := range []int64{seo, tidy, voice, disabled, untrusted, offSource, edited, orphan, revocable, switchable, neverApprove} {
		for _, c := range []int64{cfgChat, cfgFour, cfgAdmins} {
			b.WriteString("  - {configuration: " + itoa(c) + ", skill: " + itoa(k) + ", loadMode: on_demand}\n")
		}
	}
	return b.String()
}()

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

var toolNames = []string{"read_page", "read_record"}

type env struct {
	db       *store.DB
	clk      *clock.Fake
	runs     *run.Store
	skills   *skill.Store
	configs  *llmconfig.Store
	lineages *process.Store
	prep     *process.Preparer
}

// setup imports the site and returns a preparer on it; the skill store's
// admission floor is community, so the untrusted source is not admitted.
func setup(t *testing.T, db *store.DB) *env {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	doc, err := fixture.Decode([]byte(site), "site.yaml")
	if err != nil {
		t.Fatalf("decode site: %v", err)
	}
	if _, err := fixture.ImportTx(ctx, db, clk.Now(), &fixture.Options{ToolNames: toolNames}, doc); err != nil {
		t.Fatalf("import site: %v", err)
	}
	configs := llmconfig.New(db, nil, nil)
	sk, err := skill.NewStore(db, func(n string) bool { return slices.Contains(toolNames, n) }, configs,
		&skill.Config{Clock: clk, AdmissionFloor: skill.Community})
	if err != nil {
		t.Fatal(err)
	}
	runs := run.NewStore(db, clk)
	return &env{db: db, clk: clk, runs: runs, skills: sk, configs: configs, lineages: process.NewStore(runs),
		prep: process.NewPreparer(db, nil, nil, runs, sk, access.NewChecker(db, nil, nil))}
}

func (e *env) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := e.db.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// request is what a turn asks for.
type request struct {
	actor, cfg int64
	inv        *agent.Invocation
	pred       string
	unknownCfg bool // the runtime found no usable configuration
}

// emitted is one event a Prepare emitted, as it was handed over.
type emitted struct {
	kind    run.Kind
	payload any
}

// turn is one Prepare of a fresh run, born running.
type turn struct {
	run      run.Run
	emitted  []emitted
	prepared agent.Prepared
	err      error
}

// prepare creates a running run for req and prepares it. Emitted events are
// stored at privacy none, as a configuration storing nothing would.
func (e *env) prepare(t *testing.T, req request) *turn {
	t.Helper()
	ctx := context.Background()
	id := uuid.NewString()
	if err := e.runs.Create(ctx, run.Run{UUID: id, Configuration: req.cfg, Initiator: req.actor, Status: run.StatusRunning,
		LeaseOwner: "seg-" + id, LeaseExpiresAt: e.clk.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	r, err := e.runs.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := e.configs.Get(ctx, req.cfg)
	if err != nil && !errors.Is(err, llmconfig.ErrNotFound) {
		t.Fatal(err)
	}
	tr := &turn{run: r}
	emit := func(kind run.Kind, payload any) {
		tr.emitted = append(tr.emitted, emitted{kind, payload})
		if _, err := e.runs.AppendEvent(ctx, id, kind, payload, run.PrivacyNone); err != nil {
			t.Fatalf("emit %s: %v", kind, err)
		}
	}
	tr.prepared, tr.err = e.prep.Prepare(ctx, agent.Preparation{Run: r, Config: cfg, ConfigFound: err == nil && !req.unknownCfg,
		Invocation: req.inv, Predecessor: req.pred}, emit)
	return tr
}

// settle ends the turn as the runtime would: a refusal failed with
// RefusedClass, anything else completed.
func (e *env) settle(t *testing.T, tr *turn) {
	t.Helper()
	status, reason, class, msg := run.StatusCompleted, run.ReasonCompleted, "", ""
	var ref *process.RefusedError
	if errors.As(tr.err, &ref) {
		status, reason, class, msg = run.StatusFailed, run.ReasonPolicyDenied, process.RefusedClass, string(ref.Case)
	}
	if won, err := e.runs.Settle(context.Background(), tr.run.UUID, run.Settlement{Owner: tr.run.LeaseOwner, Status: status, Reason: reason, ErrClass: class, ErrMsg: msg}); err != nil || !won {
		t.Fatalf("settle %s = %v, %v", tr.run.UUID, won, err)
	}
}

// start prepares a new process of skill k on a subject and fails the test
// unless it holds one.
func (e *env) start(t *testing.T, actor, k int64, subject *content.Ref) *turn {
	t.Helper()
	tr := e.prepare(t, request{actor: actor, cfg: cfgChat, inv: &agent.Invocation{Skill: k, Subject: subject}})
	if tr.err != nil || tr.prepared.Process == nil {
		t.Fatalf("start skill %d = %+v, %v; want a process", k, tr.prepared, tr.err)
	}
	return tr
}

// cont prepares a continuation of pred by actor on cfgChat.
func (e *env) cont(t *testing.T, actor int64, pred string) *turn {
	t.Helper()
	return e.prepare(t, request{actor: actor, cfg: cfgChat, pred: pred})
}

// lineage reads the run's stored latest lineage.
func (e *env) lineage(t *testing.T, id string) (process.Lineage, bool) {
	t.Helper()
	l, ok, err := e.lineages.Latest(context.Background(), id)
	if err != nil {
		t.Fatalf("lineage of %s: %v", id, err)
	}
	return l, ok
}

// refusal returns the refusal case of err ("" when err is no refusal).
func refusal(err error) process.Refusal {
	var ref *process.RefusedError
	if errors.As(err, &ref) {
		return ref.Case
	}
	return ""
}

func page(uid, lang int64) *content.Ref {
	return &content.Ref{Table: "pages", UID: uid, Language: lang}
}

func ce(uid, lang int64) *content.Ref {
	return &content.Ref{Table: "tt_content", UID: uid, Language: lang}
}
