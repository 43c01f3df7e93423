package scenario_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"waymark/internal/access"
	"waymark/internal/auth"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// The skills API of the issue's item 10: list, show with the diff against the
// last approved snapshot, backend authoring, approve, revoke, attach/detach,
// enable/disable and sync, driven over HTTP as integrators do.

// skillMD is a SKILL.md with the given body lines.
func skillMD(name string, body ...string) string {
	return "---\nname: " + name + "\ndescription: Writes meta descriptions.\nallowed-tools: [read_page]\n---\n" +
		strings.Join(body, "\n") + "\n"
}

// skillAPI is the Site with a backend skill source (uid 2, first_party) and
// sven, who holds the skill_approve grant only.
type skillAPI struct {
	*wt.Env
	admin, erika, paula, otto, sven *wt.Client
}

func newSkillAPI(t *testing.T, db *store.DB) *skillAPI {
	t.Helper()
	// The tests' directory sources are temporary folders: the skills root is their parent.
	e := wt.New(t, db, wt.Site, &wt.Options{SkillsRoot: os.TempDir()})
	ctx := context.Background()
	if err := access.PutUserTx(ctx, db, access.User{UID: 6, Username: "sven", Groups: []int64{1}, Grants: []string{access.GrantSkillApprove}}, ""); err != nil {
		t.Fatal(err)
	}
	sven, err := auth.IssueToken(ctx, db, 6, "test", time.Now(), auth.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	a := &skillAPI{Env: e, admin: e.As(wt.Admin), erika: e.As(wt.Erika), paula: e.As(wt.Paula), otto: e.As(wt.Otto), sven: e.As(sven)}
	a.admin.Must("POST", "/api/skill-sources", map[string]any{"uid": 2, "type": "backend", "title": "Site", "trustLevel": "first_party"}, http.StatusCreated)
	return a
}

// create stores a backend skill and returns its uid and digest.
func (a *skillAPI) create(t *testing.T, identifier, markdown string) (string, string) {
	t.Helper()
	k := wt.Decode[wt.SkillDetail](t, a.admin.Must("POST", "/api/skills", map[string]any{"source": 2, "identifier": identifier, "markdown": markdown}, http.StatusCreated))
	return fmt.Sprint(k.UID), k.Digest
}

func (a *skillAPI) show(t *testing.T, uid string) wt.SkillDetail {
	t.Helper()
	return wt.Decode[wt.SkillDetail](t, a.admin.Must("GET", "/api/skills/"+uid, nil, http.StatusOK))
}

// diffOf renders a shown diff as "op text" lines.
func diffOf(t *testing.T, k wt.SkillDetail) []string {
	t.Helper()
	var out []string
	for _, l := range k.Diff {
		out = append(out, l.Op+l.Text)
	}
	return out
}

func ops(diff []string) string {
	var b strings.Builder
	for _, l := range diff {
		b.WriteByte(l[0])
	}
	return b.String()
}

func wantError(t *testing.T, what string, r wt.Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.ErrorCode() != code {
		t.Errorf("%s = %d %s, want %d %s", what, r.Status, r.Body, status, code)
	}
}

func countApprovals(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM skill_approvals").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSkillShowDiffsAgainstTheLastApprovedSnapshot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		a := newSkillAPI(t, db)
		uid, d1 := a.create(t, "meta", skillMD("Meta", "Read the page.", "Write 150 characters.", "Keep the brand."))

		k := a.show(t, uid)
		if k.LastApproved != nil || k.Instructs || k.Enabled {
			t.Fatalf("a new skill: lastApproved %+v, instructs %v, enabled %v", k.LastApproved, k.Instructs, k.Enabled)
		}
		diff := diffOf(t, k)
		if len(diff) == 0 || strings.Trim(ops(diff), "+") != "" || !strings.Contains(strings.Join(diff, "\n"), "+Write 150 characters.") {
			t.Fatalf("diff of an unapproved skill is not all added lines: %q", diff)
		}
		if h := k.History; len(h) != 1 || k.Source.Trust != "first_party" {
			t.Errorf("history %+v, source %+v", h, k.Source)
		}

		ap := wt.Decode[wt.SkillApproval](t, a.admin.Must("POST", "/api/skills/"+uid+"/approve", map[string]any{"digest": d1}, http.StatusOK))
		if ap.Digest != d1 || ap.ApprovedBy != 1 || ap.Trust != "first_party" {
			t.Fatalf("approval = %+v", ap)
		}
		k = a.show(t, uid)
		if la := k.LastApproved; la.Digest != d1 || !k.Instructs {
			t.Fatalf("after approval: lastApproved %+v, instructs %v", la, k.Instructs)
		}
		if got := ops(diffOf(t, k)); strings.Trim(got, "=") != "" {
			t.Errorf("diff of the approved version = %q, want only unchanged lines", got)
		}

		k = wt.Decode[wt.SkillDetail](t, a.admin.Must("PUT", "/api/skills/"+uid, map[string]any{"markdown": skillMD("Meta", "Read the page.", "Write 155 characters.", "Keep the brand.")}, http.StatusOK))
		d2 := k.Digest
		if d2 == d1 || k.Instructs || k.LastApproved.Digest != d1 {
			t.Fatalf("after the edit: digest %s (was %s), instructs %v, lastApproved %+v", d2, d1, k.Instructs, k.LastApproved)
		}
		var changed []string
		for _, l := range diffOf(t, k) {
			if l[0] != '=' {
				changed = append(changed, l)
			}
		}
		if strings.Join(changed, "|") != "-Write 150 characters.|+Write 155 characters." {
			t.Errorf("changed lines = %q", changed)
		}
		if h := k.History; len(h) != 2 {
			t.Errorf("history has %d versions, want 2", len(h))
		}

		wantError(t, "approval of the stale digest", a.admin.Do("POST", "/api/skills/"+uid+"/approve", map[string]any{"digest": d1}), 409, "stale_digest")
		wantError(t, "approval by paula (approve grant, no skill_approve)", a.paula.Do("POST", "/api/skills/"+uid+"/approve", map[string]any{"digest": d2}), 403, "forbidden")
		wantError(t, "approval by otto", a.otto.Do("POST", "/api/skills/"+uid+"/approve", map[string]any{"digest": d2}), 403, "forbidden")
		if n := countApprovals(t, db); n != 1 {
			t.Fatalf("refused approvals stored something: %d approvals", n)
		}
		events := map[string]bool{}
		for _, e := range a.show(t, uid).Audit {
			events[e.Event] = true
		}
		for _, ev := range []string{"created", "approved", "edited", "approval_refused_stale"} {
			if !events[ev] {
				t.Errorf("audit lacks %s: %v", ev, events)
			}
		}
		// A caller without the right is refused before any lookup and not audited.
		if events["approval_refused_denied"] {
			t.Errorf("a refusal for want of the right was audited: %v", events)
		}

		a.sven.Must("POST", "/api/skills/"+uid+"/approve", map[string]any{"digest": d2}, http.StatusOK)
		if k = a.show(t, uid); !k.Instructs || k.LastApproved.ApprovedBy != 6 {
			t.Fatalf("after sven's approval: instructs %v, lastApproved %+v", k.Instructs, k.LastApproved)
		}

		rv := wt.Decode[wt.SkillDetail](t, a.admin.Must("POST", "/api/skills/"+uid+"/revoke", map[string]any{"digest": d2}, http.StatusOK))
		if aps := rv.Approvals; len(aps) != 2 || aps[1].RevokedBy != 1 {
			t.Fatalf("revoke answered %+v", rv)
		}
		k = a.show(t, uid)
		if k.Instructs || k.LastApproved.Digest != d1 {
			t.Fatalf("after revoking %s: instructs %v, lastApproved %+v (want the older %s)", d2, k.Instructs, k.LastApproved, d1)
		}
		unknown := "v1:" + strings.Repeat("0", 64)
		wantError(t, "revoke of an unknown digest", a.admin.Do("POST", "/api/skills/"+uid+"/revoke", map[string]any{"digest": unknown}), 404, "unknown_digest")
		wantError(t, "revoke by otto", a.otto.Do("POST", "/api/skills/"+uid+"/revoke", map[string]any{"digest": d1}), 403, "forbidden")
		wantError(t, "revoke by paula", a.paula.Do("POST", "/api/skills/"+uid+"/revoke", map[string]any{"digest": d1}), 403, "forbidden")
		wantError(t, "approve without a digest", a.admin.Do("POST", "/api/skills/"+uid+"/approve", map[string]any{}), 400, "bad_request")
		wantError(t, "approve of an unknown skill", a.admin.Do("POST", "/api/skills/999/approve", map[string]any{"digest": d1}), 404, "not_found")
		if rows := a.show(t, uid).Approvals; len(rows) != 2 || rows[0].RevokedAt != nil {
			t.Errorf("refused revocations changed the approvals: %+v", rows)
		}
	})
}

func TestSkillListAndShowAreForAdminsAndSkillApprovers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		a := newSkillAPI(t, db)
		uid, digest := a.create(t, "meta", skillMD("Meta", "Body."))
		for _, c := range []*wt.Client{a.admin, a.sven} {
			list := wt.Decode[wt.SkillList](t, c.Must("GET", "/api/skills", nil, http.StatusOK)).Skills
			if len(list) != 1 {
				t.Fatalf("list = %+v", list)
			}
			it := list[0]
			if it.Identifier != "meta" || it.Digest != digest || it.Source != 2 || it.Enabled ||
				it.Instructs || fmt.Sprint(it.AllowedTools) != "[read_page]" {
				t.Errorf("list item = %+v", it)
			}
			c.Must("GET", "/api/skills/"+uid, nil, http.StatusOK)
		}
		for name, c := range map[string]*wt.Client{"otto": a.otto, "paula": a.paula, "erika": a.erika} {
			wantError(t, name+" lists skills", c.Do("GET", "/api/skills", nil), 403, "forbidden")
			wantError(t, name+" shows a skill", c.Do("GET", "/api/skills/"+uid, nil), 403, "forbidden")
		}
		wantError(t, "unknown skill", a.admin.Do("GET", "/api/skills/999", nil), 404, "not_found")
		wantError(t, "uid that is no number", a.admin.Do("GET", "/api/skills/meta", nil), 400, "bad_request")
		if r := a.As("").Do("GET", "/api/skills", nil); r.Status != 401 {
			t.Errorf("without a token: %d", r.Status)
		}
	})
}

func TestBadSkillInputIsRefusedAndStoresNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		a := newSkillAPI(t, db)
		dir := t.TempDir()
		a.admin.Must("POST", "/api/skill-sources", map[string]any{"uid": 3, "type": "directory", "title": "Repo", "path": dir, "trustLevel": "verified"}, http.StatusCreated)
		uid, _ := a.create(t, "meta", skillMD("Meta", "Body."))
		good := skillMD("Other", "Body.")
		cases := []struct {
			name   string
			client *wt.Client
			method string
			path   string
			body   any
			status int
			code   string
			says   string
		}{
			{"front matter not closed", a.admin, "POST", "/api/skills", map[string]any{"source": 2, "identifier": "x", "markdown": "---\nname: X\ndescription: d\n"}, 400, "invalid_skill", "line 4"},
			{"name missing", a.admin, "POST", "/api/skills", map[string]any{"source": 2, "identifier": "x", "markdown": "---\ndescription: d\n---\nBody\n"}, 400, "invalid_skill", "name"},
			{"unknown tool", a.admin, "POST", "/api/skills", map[string]any{"source": 2, "identifier": "x", "markdown": "---\nname: X\ndescription: d\nallowed-tools: [no_such_tool]\n---\n"}, 400, "invalid_skill", "no_such_tool"},
			{"directory source", a.admin, "POST", "/api/skills", map[string]any{"source": 3, "identifier": "x", "markdown": good}, 400, "invalid_skill", "sync"},
			{"identifier taken", a.admin, "POST", "/api/skills", map[string]any{"source": 2, "identifier": "meta", "markdown": good}, 400, "invalid_skill", "already"},
			{"unknown source", a.admin, "POST", "/api/skills", map[string]any{"source": 9, "identifier": "x", "markdown": good}, 404, "not_found", "9"},
			{"no markdown", a.admin, "POST", "/api/skills", map[string]any{"source": 2, "identifier": "x"}, 400, "bad_request", "markdown"},
			{"not json", a.admin, "POST", "/api/skills", "{", 400, "bad_request", "JSON"},
			{"unknown key", a.admin, "POST", "/api/skills", map[string]any{"source": 2, "identifier": "x", "markdown": good, "enabled": true}, 400, "bad_request", "enabled"},
			{"create by an approver", a.sven, "POST", "/api/skills", map[string]any{"source": 2, "identifier": "x", "markdown": good}, 403, "forbidden", ""},
			{"edit by an editor", a.erika, "PUT", "/api/skills/" + uid, map[string]any{"markdown": good}, 403, "forbidden", ""},
			{"edit that does not parse", a.admin, "PUT", "/api/skills/" + uid, map[string]any{"markdown": "no front matter"}, 400, "invalid_skill", "line 1"},
			{"edit of an unknown skill", a.admin, "PUT", "/api/skills/999", map[string]any{"markdown": good}, 404, "not_found", ""},
			{"source with a bad trust level", a.admin, "POST", "/api/skill-sources", map[string]any{"uid": 4, "type": "backend", "title": "T", "trustLevel": "high"}, 400, "invalid_skill", "trust"},
			{"source changing its type", a.admin, "POST", "/api/skill-sources", map[string]any{"uid": 2, "type": "directory", "title": "T", "path": dir, "trustLevel": "verified"}, 400, "invalid_skill", "type"},
			{"source by an approver", a.sven, "POST", "/api/skill-sources", map[string]any{"uid": 4, "type": "backend", "title": "T", "trustLevel": "verified"}, 403, "forbidden", ""},
		}
		for _, c := range cases {
			r := c.client.Do(c.method, c.path, c.body)
			wantError(t, c.name, r, c.status, c.code)
			if !strings.Contains(string(r.Body), c.says) {
				t.Errorf("%s: message %s does not say %q", c.name, r.Body, c.says)
			}
		}
		list := wt.Decode[wt.SkillList](t, a.admin.Must("GET", "/api/skills", nil, http.StatusOK)).Skills
		if len(list) != 1 || list[0].Name != "Meta" {
			t.Errorf("bad input changed the skills: %+v", list)
		}
		srcs := wt.Decode[wt.SkillSources](t, a.admin.Must("GET", "/api/skill-sources", nil, http.StatusOK)).Sources
		if len(srcs) != 2 || srcs[0].Type != "backend" {
			t.Errorf("bad input changed the sources: %+v", srcs)
		}
		wantError(t, "sources listed by an approver", a.sven.Do("GET", "/api/skill-sources", nil), 403, "forbidden")
	})
}

func TestSkillAttachEnableAndTheCatalogue(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		a := newSkillAPI(t, db)
		uid, digest := a.create(t, "meta", skillMD("Meta", "Body."))
		a.admin.Must("POST", "/api/skills/"+uid+"/approve", map[string]any{"digest": digest}, http.StatusOK)
		catalogue := func() []wt.CatalogueEntry {
			t.Helper()
			return wt.Decode[wt.Catalogue](t, a.erika.Must("GET", "/api/configurations/1/skills", nil, http.StatusOK)).Skills
		}
		attach := map[string]any{"skill": a.show(t, uid).UID, "loadMode": "on_demand"}
		wantError(t, "attach by an editor", a.erika.Do("POST", "/api/configurations/1/skills", attach), 403, "forbidden")
		wantError(t, "attach with an unknown mode", a.admin.Do("POST", "/api/configurations/1/skills", map[string]any{"skill": attach["skill"], "loadMode": "sometimes"}), 400, "invalid_skill")
		wantError(t, "attach to an unknown configuration", a.admin.Do("POST", "/api/configurations/99/skills", attach), 404, "not_found")
		wantError(t, "attach of an unknown skill", a.admin.Do("POST", "/api/configurations/1/skills", map[string]any{"skill": 999, "loadMode": "always"}), 404, "not_found")
		got := wt.Decode[wt.Attachment](t, a.admin.Must("POST", "/api/configurations/1/skills", attach, http.StatusOK))
		if got.Mode != "on_demand" || got.Configuration != 1 {
			t.Fatalf("attach answered %+v", got)
		}
		if c := catalogue(); len(c) != 0 {
			t.Fatalf("a disabled skill is in the catalogue: %v", c)
		}

		wantError(t, "enable by an approver", a.sven.Do("POST", "/api/skills/"+uid+"/enable", nil), 403, "forbidden")
		if k := wt.Decode[wt.SkillItem](t, a.admin.Must("POST", "/api/skills/"+uid+"/enable", nil, http.StatusOK)); !k.Enabled || !k.Instructs {
			t.Fatalf("enable answered %+v", k)
		}
		c := catalogue()
		if len(c) != 1 {
			t.Fatalf("catalogue = %v", c)
		}
		if e := c[0]; e.Identifier != "meta" || e.Mode != "on_demand" || !e.Instructs || e.Digest != digest {
			t.Errorf("catalogue entry = %+v", e)
		}
		// Unknown configurations answer 404 like forbidden ones.
		wantError(t, "catalogue of an unknown configuration", a.erika.Do("GET", "/api/configurations/99/skills", nil), 404, "not_found")

		if k := wt.Decode[wt.SkillItem](t, a.admin.Must("POST", "/api/skills/"+uid+"/disable", nil, http.StatusOK)); k.Enabled {
			t.Fatalf("disable answered %+v", k)
		}
		if c := catalogue(); len(c) != 0 {
			t.Fatalf("a disabled skill is in the catalogue: %v", c)
		}
		a.admin.Must("POST", "/api/skills/"+uid+"/enable", nil, http.StatusOK)
		wantError(t, "detach by an editor", a.erika.Do("DELETE", "/api/configurations/1/skills/"+uid, nil), 403, "forbidden")
		a.admin.Must("DELETE", "/api/configurations/1/skills/"+uid, nil, http.StatusNoContent)
		if c := catalogue(); len(c) != 0 {
			t.Fatalf("a detached skill is in the catalogue: %v", c)
		}
		wantError(t, "detach of a skill not attached", a.admin.Do("DELETE", "/api/configurations/1/skills/"+uid, nil), 404, "not_found")
		wantError(t, "enable of an unknown skill", a.admin.Do("POST", "/api/skills/999/enable", nil), 404, "not_found")
	})
}

func writeSkill(t *testing.T, dir, id, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id, "SKILL.md"), []byte(skillMD(name, "Body of "+name+".")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSkillSyncAddsOrphansAndRefusesAVanishedFolder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		a := newSkillAPI(t, db)
		dir := filepath.Join(t.TempDir(), "skills")
		writeSkill(t, dir, "alpha", "Alpha")
		writeSkill(t, dir, "beta", "Beta")
		src := wt.Decode[wt.SkillSource](t, a.admin.Must("POST", "/api/skill-sources", map[string]any{"uid": 3, "type": "directory", "title": "Repo", "path": dir, "trustLevel": "verified"}, http.StatusCreated))
		if src.Trust != "verified" || !src.Enabled || src.Path != dir {
			t.Fatalf("source = %+v", src)
		}
		// wt.List tells an empty list ("[]") from a missing or null one ("<nil>").
		sync := func() wt.SyncReport {
			t.Helper()
			return wt.Decode[wt.SyncReport](t, a.admin.Must("POST", "/api/skill-sources/3/sync", nil, http.StatusOK))
		}
		rep := sync()
		if wt.List(rep.Added) != "[alpha beta]" || wt.List(rep.Orphaned) != "[]" {
			t.Fatalf("first sync = %+v", rep)
		}
		skills := func() map[string]wt.SkillItem {
			t.Helper()
			out := map[string]wt.SkillItem{}
			for _, it := range wt.Decode[wt.SkillList](t, a.admin.Must("GET", "/api/skills", nil, http.StatusOK)).Skills {
				out[it.Identifier] = it
			}
			return out
		}
		ks := skills()
		if ks["alpha"].Enabled || ks["alpha"].Name != "Alpha" || ks["beta"].Source != 3 {
			t.Fatalf("synced skills = %+v", ks)
		}
		alpha := fmt.Sprint(ks["alpha"].UID)
		wantError(t, "edit of a directory skill", a.admin.Do("PUT", "/api/skills/"+alpha, map[string]any{"markdown": skillMD("A", "B")}), 400, "invalid_skill")

		if err := os.RemoveAll(filepath.Join(dir, "beta")); err != nil {
			t.Fatal(err)
		}
		rep = sync()
		if wt.List(rep.Orphaned) != "[beta]" || wt.List(rep.Unchanged) != "[alpha]" || wt.List(rep.Added) != "[]" {
			t.Fatalf("sync after removing beta = %+v", rep)
		}
		ks = skills()
		if !ks["beta"].Orphaned || ks["alpha"].Orphaned {
			t.Fatalf("after the second sync: %+v", ks)
		}
		beta := fmt.Sprint(ks["beta"].UID)
		wantError(t, "enable of an orphaned skill", a.admin.Do("POST", "/api/skills/"+beta+"/enable", nil), 400, "invalid_skill")
		wantError(t, "approval of an orphaned skill", a.admin.Do("POST", "/api/skills/"+beta+"/approve", map[string]any{"digest": ks["beta"].Digest}), 409, "orphaned")

		// The folder vanishes: a clear error, and nothing changes.
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		wantError(t, "sync of a vanished folder", a.admin.Do("POST", "/api/skill-sources/3/sync", nil), 422, "source_unreadable")
		if after := skills(); after["alpha"].Orphaned || len(after) != 2 {
			t.Errorf("a failed sync changed the skills: %+v", after)
		}
		wantError(t, "sync of an unknown source", a.admin.Do("POST", "/api/skill-sources/9/sync", nil), 404, "not_found")
		wantError(t, "sync of a backend source", a.admin.Do("POST", "/api/skill-sources/2/sync", nil), 400, "invalid_skill")
		wantError(t, "sync by an approver", a.sven.Do("POST", "/api/skill-sources/3/sync", nil), 403, "forbidden")
	})
}
