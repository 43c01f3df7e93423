package web_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// skillsSite is the web tests' site with a password for admin (en), the
// skill_approve grant for otto (en, no admin), and skills that do not
// instruct for each reason: no approval (13), an untrusted source (14),
// disabled (15).
var skillsSite = strings.NewReplacer(
	"username: admin,", "username: admin, password: admin-pass-1234,",
	"username: otto, token: token-otto-00004, groups: [1],", "username: otto, password: otto-pass-12345, token: token-otto-00004, groups: [1], grants: [skill_approve],",
	"  - {uid: 2, type: backend, title: Site, trustLevel: first_party}",
	"  - {uid: 2, type: backend, title: Site, trustLevel: first_party}\n  - {uid: 3, type: backend, title: Fremd, trustLevel: untrusted}",
	"\nskills:\n", `
skills:
  - {uid: 13, source: 2, identifier: draft, enabled: true, markdown: "---\nname: Entwurf\ndescription: Noch nicht geprüft.\n---\nText."}
  - {uid: 14, source: 3, identifier: foreign, enabled: true, markdown: "---\nname: Fremder Skill\ndescription: Von außen.\n---\nText."}
  - {uid: 15, source: 2, identifier: resting, enabled: false, markdown: "---\nname: Ruhend\ndescription: Ausgeschaltet.\n---\nText."}
`,
	"\napprovals:\n", `
approvals:
  - {skill: 14, digest: current, approvedBy: 1}
  - {skill: 15, digest: current, approvedBy: 1}
`,
).Replace(site)

const skillsAdminToken = "token-admin-0001"

func skillsEnv(t *testing.T, db *store.DB, opts *wt.Options) *wt.Env {
	t.Helper()
	return wt.New(t, db, skillsSite, opts)
}

var hiddenDigest = regexp.MustCompile(`name="digest" value="(v1:[0-9a-f]{64})"`)

// approveDigest is the digest the page's Approve form carries.
func approveDigest(t *testing.T, a answer) string {
	t.Helper()
	i := strings.Index(a.Body, `/approve"`)
	if i < 0 {
		t.Fatalf("no approve form in:\n%s", a.Body)
	}
	m := hiddenDigest.FindStringSubmatch(a.Body[i:])
	if m == nil {
		t.Fatalf("the approve form carries no digest:\n%s", a.Body[i:])
	}
	return m[1]
}

// between is the part of s from start up to end ("" when start is missing).
func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	j := strings.Index(s[i:], end)
	if j < 0 {
		return s[i:]
	}
	return s[i : i+j]
}

func skillDetail(t *testing.T, e *wt.Env, uid int64) wt.SkillDetail {
	t.Helper()
	d, r := e.As(skillsAdminToken).Skill(uid)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /api/skills/%d = %d: %s", uid, r.Status, r.Body)
	}
	return d
}

// Screens 1 and 2: an editor gets the 403 page (not a redirect) on every
// skills URL, GET and POST alike, and nothing changes; a skill approver sees
// and may approve skills but gets 403 on editing and attachments.
func TestSkillScreensAnswer403ToThoseWithoutTheRight(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := skillsEnv(t, db, nil)
		before := skillDetail(t, e, 13)
		erika := login(t, e, "erika", "erika-pass-1234")
		lacks(t, "editor's navigation", erika.get("/chat"), `href="/admin"`)
		for _, c := range []struct{ method, path string }{
			{"GET", "/admin/skills"}, {"GET", "/admin/skills/13"}, {"GET", "/admin/configurations/1/skills?user=2"},
			{"POST", "/admin/skills/13/approve"}, {"POST", "/admin/skills/13/revoke"}, {"POST", "/admin/skills/13/edit"},
			{"POST", "/admin/skills/13/disable"}, {"POST", "/admin/skills/sources/2/sync"},
			{"POST", "/admin/configurations/1/skills"}, {"POST", "/admin/configurations/1/skills/12/detach"},
		} {
			a := erika.do(c.method, c.path, url.Values{"digest": {before.Digest}, "markdown": {"---\nname: X\ndescription: Y\n---\nZ"},
				"skill": {"13"}, "loadMode": {"always"}}, "")
			if a.Status != http.StatusForbidden || a.Header.Get("Location") != "" || a.Header.Get("HX-Redirect") != "" {
				t.Errorf("editor %s %s = %d (Location %q, HX-Redirect %q), want a 403 page", c.method, c.path, a.Status,
					a.Header.Get("Location"), a.Header.Get("HX-Redirect"))
			}
			contains(t, c.method+" "+c.path, a, "Kein Zugriff")
		}
		after := skillDetail(t, e, 13)
		if after.Digest != before.Digest || len(after.Approvals) != 0 || !after.Enabled {
			t.Errorf("an editor's refused requests changed skill 13: %+v", after)
		}
		if a, _ := e.As(skillsAdminToken).Skills(); len(a) == 0 {
			t.Fatal("no skills")
		}

		otto := login(t, e, "otto", "otto-pass-12345")
		contains(t, "approver's navigation", otto.get("/chat"), `href="/admin"`)
		contains(t, "approver's list", otto.get("/admin/skills"), "Entwurf")
		if a := otto.get("/admin/configurations/1/skills"); a.Status != http.StatusForbidden {
			t.Errorf("approver GET attachments = %d, want 403", a.Status)
		}
		if a := otto.post("/admin/skills/13/edit", url.Values{"markdown": {"---\nname: X\ndescription: Y\n---\nZ"}}); a.Status != http.StatusForbidden {
			t.Errorf("approver POST edit = %d, want 403", a.Status)
		}
		page := otto.get("/admin/skills/13")
		lacks(t, "approver's skill page", page, "/edit\"", "/disable\"")
		a := otto.post("/admin/skills/13/approve", url.Values{"digest": {approveDigest(t, page)}})
		contains(t, "approver approves", a, "Approved.")
		if d := skillDetail(t, e, 13); !d.Instructs || d.Approvals[0].ApprovedBy != 4 {
			t.Errorf("after otto's approval: instructs %v, approvals %+v", d.Instructs, d.Approvals)
		}
	})
}

// Screen 1: the list shows source, trust, enabled, process flag, digest and
// whether each skill instructs, and why not.
func TestSkillListSaysWhyASkillDoesNotInstruct(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := skillsEnv(t, db, nil)
		b := login(t, e, "admin", "admin-pass-1234")
		list := b.get("/admin/skills")
		if list.Status != http.StatusOK {
			t.Fatalf("GET /admin/skills = %d: %s", list.Status, list.Body)
		}
		row := func(uid string) string {
			r := between(list.Body, `<tr id="skill-`+uid+`">`, "</tr>")
			if r == "" {
				t.Fatalf("no row of skill %s in:\n%s", uid, list.Body)
			}
			return r
		}
		seoDigest := skillDetail(t, e, 12).Digest
		for uid, want := range map[string][]string{
			"12": {"SEO optimieren", "Site", "first party", "<td>yes</td>\n      <td>yes</td>", seoDigest[3:15], ">instructs<"},
			"13": {"Entwurf", "does not instruct: the current digest has no approval"},
			"14": {"Fremder Skill", "Fremd", "untrusted", "does not instruct: its source&#39;s trust level is below the instruction threshold"},
			"15": {"Ruhend", "<td>no</td>", "does not instruct: it is disabled"},
		} {
			r := row(uid)
			for _, w := range want {
				if !strings.Contains(r, w) {
					t.Errorf("row of skill %s lacks %q:\n%s", uid, w, r)
				}
			}
		}
		contains(t, "links", list, `href="/admin/skills/12"`, `href="/admin/configurations/1/skills"`)
		// Revoked: the reason changes once the current digest's approval is revoked.
		b.post("/admin/skills/12/revoke", url.Values{"digest": {seoDigest}})
		contains(t, "after revoke", b.get("/admin/skills"), "does not instruct: the approval of the current digest was revoked")
	})
}

const editedSeo = "---\nname: SEO optimieren\ndescription: Die Seite verbessern.\nprocess: true\nallowed-tools: [read_page, update_page_metadata, set_progress, highlight_record]\n---\nZwei Änderungen pro Schritt.\n"

// Screen 1: an administrator edits a backend skill in the textarea, sees the
// diff against the approved snapshot, approves the digest shown, and the
// editor's slash menu lists the new version.
func TestAdministratorEditsSeesTheDiffAndApprovesASkill(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := skillsEnv(t, db, nil)
		b := login(t, e, "admin", "admin-pass-1234")
		old := skillDetail(t, e, 12)
		page := b.get("/admin/skills/12")
		contains(t, "skill page", page, "SEO optimieren", "<p>Eine Änderung pro Schritt.</p>", "The version shown (digest "+old.Digest[3:15]+") is approved.",
			"admin, ", "highlight_record, read_page, set_progress, update_page_metadata", `<textarea id="skill-markdown" name="markdown"`)
		lacks(t, "approved skill page", page, `/approve"`)

		a := b.post("/admin/skills/12/edit", url.Values{"markdown": {strings.ReplaceAll(editedSeo, "\n", "\r\n")}})
		now := skillDetail(t, e, 12)
		if now.Digest == old.Digest || now.Instructs {
			t.Fatalf("after the edit: digest %s (was %s), instructs %v", now.Digest, old.Digest, now.Instructs)
		}
		contains(t, "after the edit", a, "Saved as a new version.", "<del>Eine Änderung pro Schritt.</del>", "<ins>Zwei Änderungen pro Schritt.</ins>",
			"Compared with the approved version "+old.Digest[3:15], "does not instruct: the current digest has no approval", "edited by admin")
		if got := approveDigest(t, a); got != now.Digest {
			t.Errorf("the approve form carries %s, want the current digest %s", got, now.Digest)
		}
		menu := func() string {
			r := e.As("token-erika-0002").Do("GET", "/api/configurations/1/process-skills", nil)
			return string(r.Body)
		}
		if strings.Contains(menu(), "SEO optimieren") {
			t.Errorf("the unapproved edit is in the editor's menu: %s", menu())
		}
		a = b.post("/admin/skills/12/approve", url.Values{"digest": {now.Digest}})
		contains(t, "after approve", a, "Approved.", ">instructs<", "The version shown (digest "+now.Digest[3:15]+") is approved.")
		if d := skillDetail(t, e, 12); !d.Instructs || d.LastApproved == nil || d.LastApproved.Digest != now.Digest {
			t.Errorf("after approve: instructs %v, last approved %+v", d.Instructs, d.LastApproved)
		}
		if !strings.Contains(menu(), "SEO optimieren") {
			t.Errorf("the approved skill is not in the editor's menu: %s", menu())
		}
	})
}

// Screen 1: an approval sent from a page that shows an older version (the
// skill was edited in another session) is refused; the page says so, shows
// the diff of the new text and carries the new digest; nothing is approved.
func TestApprovalFromAStalePageIsRefusedAndShowsTheNewDiff(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := skillsEnv(t, db, nil)
		b := login(t, e, "admin", "admin-pass-1234")
		seen := approveDigest(t, b.get("/admin/skills/13"))
		if _, r := e.As(skillsAdminToken).EditSkill(13, "---\nname: Entwurf\ndescription: Noch nicht geprüft.\n---\nAnderer Text."); r.Status != http.StatusOK {
			t.Fatalf("edit in another session = %d: %s", r.Status, r.Body)
		}
		current := skillDetail(t, e, 13).Digest
		a := b.post("/admin/skills/13/approve", url.Values{"digest": {seen}})
		contains(t, "stale approval", a, `role="alert">This skill was changed after you opened the page. Nothing was approved.`,
			"<ins>Anderer Text.</ins>")
		lacks(t, "stale approval", a, "Approved.")
		if got := approveDigest(t, a); got != current || got == seen {
			t.Errorf("after the refusal the form carries %s, want the new digest %s (seen %s)", got, current, seen)
		}
		if d := skillDetail(t, e, 13); len(d.Approvals) != 0 || d.Instructs {
			t.Errorf("a stale approval stored something: %+v", d.Approvals)
		}
		// A malformed digest is bad input and changes nothing either.
		a = b.post("/admin/skills/13/approve", url.Values{"digest": {"v1:nothex"}})
		contains(t, "malformed digest", a, `role="alert">Nothing was changed: digest:`)
		if d := skillDetail(t, e, 13); len(d.Approvals) != 0 {
			t.Errorf("a malformed digest stored an approval: %+v", d.Approvals)
		}
	})
}

// Screen 1: a SKILL.md that does not parse is shown again with the parser's
// message at its line; nothing is saved.
func TestBrokenSkillMdShowsTheErrorAtItsLineAndSavesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := skillsEnv(t, db, nil)
		b := login(t, e, "admin", "admin-pass-1234")
		before := skillDetail(t, e, 13)
		broken := "---\nname: Entwurf\ndescription: [unclosed\n---\nText."
		a := b.post("/admin/skills/13/edit", url.Values{"markdown": {broken}})
		contains(t, "broken SKILL.md", a, `role="alert">The SKILL.md was not saved: line 3:`, `<li id="line-3" class="error-line">`,
			`role="alert">Line 3: `, `aria-invalid="true"`, "description: [unclosed\n---\nText.</textarea>")
		after := skillDetail(t, e, 13)
		if after.Digest != before.Digest || len(after.History) != len(before.History) {
			t.Errorf("a broken SKILL.md changed the skill: %s → %s, history %d → %d", before.Digest, after.Digest, len(before.History), len(after.History))
		}
		// A text that parses but names an unknown tool is refused as a whole, also unsaved.
		a = b.post("/admin/skills/13/edit", url.Values{"markdown": {"---\nname: Entwurf\ndescription: D\nallowed-tools: [no_such_tool]\n---\nText."}})
		contains(t, "unknown tool", a, `role="alert">Nothing was changed: `, "no_such_tool")
		if d := skillDetail(t, e, 13); d.Digest != before.Digest {
			t.Errorf("an unknown tool changed the skill")
		}
	})
}

// Screen 1: revoke per digest, and enable/disable, from the skill page.
func TestRevokeAndSwitchASkillFromItsPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := skillsEnv(t, db, nil)
		b := login(t, e, "admin", "admin-pass-1234")
		d := skillDetail(t, e, 12)
		page := b.get("/admin/skills/12")
		contains(t, "revoke button", page, "Revoke "+d.Digest[3:15])
		a := b.post("/admin/skills/12/revoke", url.Values{"digest": {d.Digest}})
		contains(t, "after revoke", a, "Revoked.", "the approval of the current digest was revoked", "admin, ")
		if got := skillDetail(t, e, 12); got.Instructs || got.Approvals[0].RevokedBy != 1 {
			t.Errorf("after revoke: %+v", got.Approvals)
		}
		a = b.post("/admin/skills/12/revoke", url.Values{"digest": {"v1:" + strings.Repeat("0", 64)}})
		contains(t, "unknown digest", a, `role="alert">This digest was never approved for the skill.`)

		a = b.post("/admin/skills/12/disable", nil)
		contains(t, "disable", a, "The skill is disabled.", "does not instruct: it is disabled", "/enable\"")
		if skillDetail(t, e, 12).Enabled {
			t.Error("still enabled")
		}
		a = b.post("/admin/skills/12/enable", nil)
		contains(t, "enable", a, "The skill is enabled.")
		if !skillDetail(t, e, 12).Enabled {
			t.Error("not enabled")
		}
		if a := b.get("/admin/skills/999"); a.Status != http.StatusNotFound {
			t.Errorf("unknown skill = %d, want 404", a.Status)
		}
	})
}

// Screen 1: syncing a directory source shows its report — added, changed
// (and disabled because of it), orphaned; an unreadable folder changes nothing.
func TestSyncOfADirectorySourceShowsItsReport(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		root := t.TempDir()
		dir := filepath.Join(root, "team")
		writeSkill := func(id, body string) {
			if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, id, "SKILL.md"), []byte("---\nname: "+id+"\ndescription: D\n---\n"+body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		writeSkill("alpha", "A")
		writeSkill("beta", "B")
		e := skillsEnv(t, db, &wt.Options{SkillsRoot: root})
		e.As(skillsAdminToken).Must("POST", "/api/skill-sources", map[string]any{"uid": 7, "type": "directory", "title": "Team", "path": "team", "trustLevel": "verified"}, http.StatusCreated)
		b := login(t, e, "admin", "admin-pass-1234")
		contains(t, "sync button", b.get("/admin/skills"), `hx-post="/admin/skills/sources/7/sync"`, "Sync Team")
		a := b.post("/admin/skills/sources/7/sync", nil)
		contains(t, "first sync", a, "The source was synced.", "Added (disabled until enabled)</dt><dd>alpha, beta</dd>", "does not instruct: it is disabled")
		var alpha int64
		items, _ := e.As(skillsAdminToken).Skills()
		for _, it := range items {
			if it.Identifier == "alpha" {
				alpha = it.UID
			}
		}
		e.As(skillsAdminToken).SetSkillEnabled(alpha, true)
		writeSkill("alpha", "A changed")
		if err := os.RemoveAll(filepath.Join(dir, "beta")); err != nil {
			t.Fatal(err)
		}
		a = b.post("/admin/skills/sources/7/sync", nil)
		contains(t, "second sync", a, "Changed</dt><dd>alpha</dd>", "Disabled because they changed</dt><dd>alpha</dd>", "Orphaned</dt><dd>beta</dd>")
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		before, _ := e.As(skillsAdminToken).Skills()
		a = b.post("/admin/skills/sources/7/sync", nil)
		contains(t, "unreadable folder", a, `role="alert">The source&#39;s folder is missing or unreadable; nothing changed.`)
		lacks(t, "unreadable folder", a, "Sync report")
		if after, _ := e.As(skillsAdminToken).Skills(); len(after) != len(before) {
			t.Errorf("a failed sync changed the skills: %d → %d", len(before), len(after))
		}
	})
}

// Screen 2: per configuration, attach and detach skills with their load mode
// and see the slash menu a chosen user would see.
func TestAttachmentsScreenAttachesDetachesAndShowsAUsersMenu(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := skillsEnv(t, db, nil)
		b := login(t, e, "admin", "admin-pass-1234")
		a := b.get("/admin/configurations/1/skills?user=2")
		if a.Status != http.StatusOK {
			t.Fatalf("GET attachments = %d: %s", a.Status, a.Body)
		}
		menuOf := func(a answer) string { return between(a.Body, `aria-label="Slash menu of erika"`, "</ul>") }
		contains(t, "attachments", a, `<option value="always" selected>always</option>`, `<option value="13">Entwurf (draft)</option>`)
		if !strings.Contains(menuOf(a), "SEO optimieren") {
			t.Errorf("erika's menu lacks the process:\n%s", a.Body)
		}
		// Bad input: an unknown load mode changes nothing.
		a = b.post("/admin/configurations/1/skills?user=2", url.Values{"skill": {"12"}, "loadMode": {"sometimes"}})
		contains(t, "bad mode", a, `role="alert">Nothing was changed: mode: unknown load mode`)
		a = b.post("/admin/configurations/1/skills?user=2", url.Values{"skill": {"abc"}, "loadMode": {"always"}})
		contains(t, "bad skill", a, `role="alert">Nothing was changed: skill:`)
		r := e.As(skillsAdminToken).Do("GET", "/api/configurations/1/skills", nil)
		if !strings.Contains(string(r.Body), `"mode":"always"`) {
			t.Errorf("bad input changed the attachment: %s", r.Body)
		}
		a = b.post("/admin/configurations/1/skills/12/detach?user=2", nil)
		contains(t, "detach", a, "Detached.", "erika sees no process in the slash menu.")
		a = b.post("/admin/configurations/1/skills?user=2", url.Values{"skill": {"12"}, "loadMode": {"on_demand"}})
		contains(t, "attach", a, "Attached.", `<option value="on_demand" selected>on demand</option>`)
		if !strings.Contains(menuOf(a), "SEO optimieren") {
			t.Errorf("after attaching again erika's menu lacks the process:\n%s", a.Body)
		}
		if a := b.get("/admin/configurations/1/skills?user=x"); a.Status != http.StatusBadRequest {
			t.Errorf("?user=x = %d, want 400", a.Status)
		}
		if a := b.get("/admin/configurations/99/skills"); a.Status != http.StatusNotFound {
			t.Errorf("unknown configuration = %d, want 404", a.Status)
		}
	})
}
