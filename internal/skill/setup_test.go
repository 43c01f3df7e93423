package skill_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"waymark/internal/clock"
	"waymark/internal/llmconfig"
	"waymark/internal/skill"
	"waymark/internal/store"
)

// Users of the test site.
const (
	admin    = 1 // administrator
	approver = 2 // editor whose group holds the skill_approve grant
	editor   = 3 // editor of group 1, no grants
	outsider = 4 // in no group
)

// Configurations and sources of the test site.
const (
	cfgChat   = 1 // active, group 1
	cfgAdmins = 2 // active, administrators only
	srcBack   = 10
	srcDir    = 20
)

// knownTools is the registry the store validates allowed-tools against.
var knownTools = []string{"choose", "content_read", "content_update", "page_read"}

type bundle struct {
	db    *store.DB
	st    *skill.Store
	clock *clock.Fake
	dir   string // the folder of source srcDir
}

func exec(t testing.TB, db *store.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// setup seeds users, groups, two configurations (provider demo), a verified
// backend source and a verified directory source on an empty folder.
func setup(t testing.TB, db *store.DB, cfg *skill.Config) bundle {
	t.Helper()
	exec(t, db, `INSERT INTO be_groups (uid, title) VALUES (1, 'Editors')`)
	exec(t, db, `INSERT INTO be_groups (uid, title, grants) VALUES (2, 'Skill reviewers', '["skill_approve"]')`)
	exec(t, db, `INSERT INTO be_users (uid, username, admin) VALUES (1, 'admin', TRUE)`)
	exec(t, db, `INSERT INTO be_users (uid, username, group_uids) VALUES (2, 'paula', '[1, 2]')`)
	exec(t, db, `INSERT INTO be_users (uid, username, group_uids) VALUES (3, 'erika', '[1]')`)
	exec(t, db, `INSERT INTO be_users (uid, username) VALUES (4, 'otto')`)
	exec(t, db, `INSERT INTO configurations (uid, identifier, active, provider_type, context_window, allowed_groups)
		VALUES (1, 'chat', TRUE, 'demo', 32000, '[1]'), (2, 'admins', TRUE, 'demo', 32000, '[]')`)
	fake := clock.NewFake(time.Date(2026, 10, 8, 9, 0, 0, 0, time.UTC))
	root := t.TempDir()
	c := skill.Config{Clock: fake}
	if cfg != nil {
		c = *cfg
		c.Clock = fake
	}
	c.Root = root
	st, err := skill.NewStore(db, func(n string) bool { return slices.Contains(knownTools, n) }, llmconfig.New(db, nil, nil), &c)
	if err != nil {
		t.Fatalf("NewStore: %v", err)
	}
	b := bundle{db: db, st: st, clock: fake, dir: filepath.Join(root, "skills")}
	if err := os.Mkdir(b.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, src := range []skill.Source{
		{UID: srcBack, Type: skill.Backend, Title: "Authored here", Trust: skill.Verified, Enabled: true},
		{UID: srcDir, Type: skill.Directory, Title: "Checkout", Path: b.dir, Trust: skill.Verified, Enabled: true},
	} {
		if err := st.SourcePut(ctx, src); err != nil {
			t.Fatalf("SourcePut(%d): %v", src.UID, err)
		}
	}
	return b
}

// version is a valid skill version.
func version(name string, tools ...string) skill.Version {
	v := skill.Version{Name: name, Description: "Does " + name + ".", Body: "# " + name + "\n\nStep one: read the page."}
	if tools != nil {
		v.AllowedTools = tools
	}
	return v
}

// create stores an enabled backend skill and attaches it to cfgChat on demand.
func (b bundle) create(t testing.TB, identifier string, v skill.Version) skill.Skill {
	t.Helper()
	ctx := context.Background()
	k, err := b.st.Create(ctx, skill.CreateParams{Source: srcBack, Identifier: identifier, Version: v, Actor: editor})
	if err != nil {
		t.Fatalf("Create(%s): %v", identifier, err)
	}
	if err := b.st.SetEnabled(ctx, admin, k.UID, true); err != nil {
		t.Fatalf("SetEnabled(%d): %v", k.UID, err)
	}
	if err := b.st.Attach(ctx, cfgChat, k.UID, skill.OnDemand); err != nil {
		t.Fatalf("Attach(%d): %v", k.UID, err)
	}
	k.Enabled = true
	return k
}

// approve approves k's current digest as admin.
func (b bundle) approve(t testing.TB, uid int64) skill.Approval {
	t.Helper()
	k, err := b.st.Get(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	a, err := b.st.Approve(context.Background(), admin, uid, k.Digest())
	if err != nil {
		t.Fatalf("Approve(%d): %v", uid, err)
	}
	return a
}

func (b bundle) instructs(t testing.TB, uid int64) bool {
	t.Helper()
	ok, _, err := b.st.Instructs(context.Background(), uid)
	if err != nil {
		t.Fatalf("Instructs(%d): %v", uid, err)
	}
	return ok
}

// writeSkill writes dir/<folder>/SKILL.md.
func (b bundle) writeSkill(t testing.TB, folder string, v skill.Version) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(b.dir, folder), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, folder, "SKILL.md"), skill.Render(v), 0o644); err != nil {
		t.Fatal(err)
	}
}

// events lists the audit events of a skill.
func (b bundle) events(t testing.TB, uid int64) []skill.AuditEvent {
	t.Helper()
	es, err := b.st.Audit(context.Background(), uid)
	if err != nil {
		t.Fatalf("Audit(%d): %v", uid, err)
	}
	var out []skill.AuditEvent
	for _, e := range es {
		out = append(out, e.Event)
	}
	return out
}

// count counts rows of a table.
func count(t testing.TB, db *store.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func refusal(err error) skill.Refusal {
	var r *skill.RefusedError
	if errors.As(err, &r) {
		return r.Case
	}
	return ""
}

func (b bundle) removeSkill(t testing.TB, folder string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(b.dir, folder)); err != nil {
		t.Fatal(err)
	}
}

func pinReason(err error) skill.PinReason {
	var p *skill.PinError
	if errors.As(err, &p) {
		return p.Reason
	}
	return ""
}
