package web

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"waymark/internal/httpapi"
	"waymark/internal/skill"
)

// mountFunc mounts one route of the UI.
type mountFunc func(pattern string, h func(w http.ResponseWriter, r *http.Request))

// registerAdminSkills mounts the skills and attachments screens.
// Reviewers (administrators and holders of the
// skill_approve grant) see skills and approve or revoke digests; only
// administrators edit, switch, sync and attach — the same rights as the JSON
// API's /api/skills… routes. Everyone else gets the 403 page.
func (u *UI) registerAdminSkills(m mountFunc) {
	m("GET /admin/skills", u.authed(u.reviewer(u.handleSkills)))
	m("POST /admin/skills/sources/{uid}/sync", u.authed(u.adminOnly(u.handleSkillSync)))
	m("GET /admin/skills/{uid}", u.authed(u.reviewer(u.handleSkillPage)))
	m("POST /admin/skills/{uid}/approve", u.authed(u.reviewer(u.handleSkillApprove)))
	m("POST /admin/skills/{uid}/revoke", u.authed(u.reviewer(u.handleSkillRevoke)))
	m("POST /admin/skills/{uid}/enable", u.authed(u.adminOnly(u.handleSkillSwitch(true))))
	m("POST /admin/skills/{uid}/disable", u.authed(u.adminOnly(u.handleSkillSwitch(false))))
	m("POST /admin/skills/{uid}/edit", u.authed(u.adminOnly(u.handleSkillEdit)))
	m("GET /admin/configurations/{cfg}/skills", u.authed(u.adminOnly(u.handleAttachments)))
	m("POST /admin/configurations/{cfg}/skills", u.authed(u.adminOnly(u.handleAttach)))
	m("POST /admin/configurations/{cfg}/skills/{skill}/detach", u.authed(u.adminOnly(u.handleDetach)))
}

// reviewer runs h for administrators and skill approvers, else renders the
// administration's 403 page (admin.go).
func (u *UI) reviewer(h screenFunc) screenFunc {
	return func(w http.ResponseWriter, r *http.Request, me *user) {
		if !me.A.MayReviewSkills() {
			u.forbidden(w, r, me, "admin.forbidden.reviewers")
			return
		}
		h(w, r, me)
	}
}

// show renders a screen: the whole page for a GET, the content alone for an
// htmx POST (the forms swap it into main).
func (u *UI) show(w http.ResponseWriter, r *http.Request, me *user, screen, titleKey string, data any) {
	p := u.newPage(me, "admin", titleKey)
	p.Data = data
	name := "layout"
	if r.Method == http.MethodPost {
		name = "content"
	}
	u.render(w, r, screen, name, p, http.StatusOK)
}

// when formats a time for the screens (UTC, to the minute).
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// short is the first 12 hex digits of a digest (its "v1:" prefix dropped).
func short(digest string) string {
	_, d, _ := strings.Cut(digest, ":")
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// names looks user names up once per request.
type names struct {
	u   *UI
	ctx context.Context
	m   map[int64]string
}

func (n *names) of(uid int64) string {
	if uid == 0 {
		return "–" // written by no user (an import)
	}
	if s, ok := n.m[uid]; ok {
		return s
	}
	s, err := n.u.userName(n.ctx, uid)
	if err != nil {
		s = "#" + strconv.FormatInt(uid, 10)
	}
	n.m[uid] = s
	return s
}

// --- screen 1: the skills list -------------------------------------------

type skillsData struct {
	Admin   bool
	Skills  []skillRow
	Sources []skill.Source
	Configs []configLink
	Report  *skill.SyncReport
	Error   string
	Notice  string
}

type skillRow struct {
	UID         int64
	Name        string
	Identifier  string
	SourceTitle string
	Trust       string
	Enabled     bool
	Process     bool
	Digest      string
	Instructs   bool
	Why         string
}

type configLink struct {
	UID  int64
	Name string
}

func (u *UI) skillsData(ctx context.Context, me *user) (*skillsData, error) {
	srcs, err := u.Skills.SourceList(ctx)
	if err != nil {
		return nil, err
	}
	byUID := map[int64]skill.Source{}
	for _, s := range srcs {
		byUID[s.UID] = s
	}
	ks, err := u.Skills.List(ctx, 0)
	if err != nil {
		return nil, err
	}
	d := &skillsData{Admin: me.A.IsAdmin(), Sources: srcs}
	for _, k := range ks {
		src := byUID[k.Source]
		why, err := u.Skills.Standing(ctx, k, src)
		if err != nil {
			return nil, err
		}
		d.Skills = append(d.Skills, skillRow{UID: k.UID, Name: k.Version.Name, Identifier: k.Identifier, SourceTitle: src.Title,
			Trust: me.T.Get("skills.trust." + string(src.Trust)), Enabled: k.Enabled, Process: k.Version.Process,
			Digest: short(k.Digest()), Instructs: why == "", Why: reasonText(me, why)})
	}
	if d.Admin {
		cfgs, err := u.Configs.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range cfgs {
			d.Configs = append(d.Configs, configLink{UID: c.UID, Name: c.Name})
		}
	}
	return d, nil
}

// reasonText is the screen's sentence for why a skill does not instruct.
func reasonText(me *user, r skill.Reason) string {
	if r == "" {
		return ""
	}
	return me.T.Get("skills.why." + string(r))
}

func (u *UI) handleSkills(w http.ResponseWriter, r *http.Request, me *user) {
	d, err := u.skillsData(r.Context(), me)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	u.show(w, r, me, "admin_skills", "skills.title", d)
}

// handleSkillSync brings a directory source up to date (skill.Store.Sync)
// and shows the list with the report: added, changed (and disabled because
// of it), orphaned, restored. An unreadable folder changes nothing and says so.
func (u *UI) handleSkillSync(w http.ResponseWriter, r *http.Request, me *user) {
	ctx := r.Context()
	uid, err := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	var rep skill.SyncReport
	if err == nil && uid > 0 {
		rep, err = u.Skills.Sync(ctx, uid)
	} else {
		err = skillInvalid("source")
	}
	d, derr := u.skillsData(ctx, me)
	if derr != nil {
		u.fail(w, r, me, derr)
		return
	}
	if d.Error, d.Notice = u.outcome(ctx, me, "skill sync", err, "skills.sync.done"); err == nil {
		d.Report = &rep
	}
	u.show(w, r, me, "admin_skills", "skills.title", d)
}

// outcome is what an action's result shows: the refusal (logged when it is
// internal), or the notice of success.
func (u *UI) outcome(ctx context.Context, me *user, what string, err error, notice string) (refusal, done string) {
	if err != nil {
		u.logErr(ctx, what, err)
		return u.skillErrorText(me, err), ""
	}
	return "", me.T.Get(notice)
}

// skillInvalid is bad form input naming the field.
func skillInvalid(field string) error {
	return &skill.InvalidError{Field: field, Msg: "want a positive number"}
}

// skillErrorText is the sentence for an error of the skill store.
func (u *UI) skillErrorText(me *user, err error) string {
	var refused *skill.RefusedError
	var parse *skill.ParseError
	switch {
	case errors.As(err, &refused):
		return me.T.Get("skills.error." + string(refused.Case))
	case errors.As(err, &parse):
		return me.T.Get("skills.error.parse", parse.Error())
	case errors.Is(err, skill.ErrSourceUnreadable):
		return me.T.Get("skills.error.source_unreadable")
	case errors.Is(err, skill.ErrInvalid):
		return me.T.Get("skills.error.invalid", err.Error())
	case errors.Is(err, skill.ErrNotFound):
		return me.T.Get("error.not_found")
	}
	_, code := httpapi.Classify(err)
	return u.errorText(me, code)
}

// --- screen 1: one skill -------------------------------------------------

type skillPage struct {
	Admin      bool
	UID        int64
	Name       string
	Identifier string
	Source     skill.Source
	Trust      string
	Backend    bool
	Enabled    bool
	Orphaned   bool
	Process    bool
	Desc       string
	Tools      string // "" when undeclared
	Digest     string // the full digest shown: what Approve sends
	Short      string
	Instructs  bool
	Why        string
	Approved   bool // the current digest has an unrevoked approval
	Body       template.HTML
	Diff       []skill.DiffLine
	Since      string // when the diff's base was approved, "" when nothing was
	Approvals  []approvalRow
	Revocable  []revocable // digests with an unrevoked approval
	History    []historyRow
	Markdown   string // the textarea
	Lines      []numberedLine
	ErrLine    int
	Error      string
	Notice     string
}

type approvalRow struct {
	Digest, Short, By, At, RevokedBy, RevokedAt string
	Revoked, Current                            bool
}

type revocable struct{ Digest, Short string }

type historyRow struct{ By, Short, At string }

type numberedLine struct {
	N    int
	Text string
	Err  string
}

// skillPage reads the review of a skill (skill.Store.Review, as GET
// /api/skills/{uid} does) for the screen.
func (u *UI) skillPage(ctx context.Context, me *user, uid int64) (*skillPage, error) {
	rv, err := u.Skills.Review(ctx, uid)
	if err != nil {
		return nil, err
	}
	k, v := rv.Skill, rv.Skill.Version
	n := &names{u: u, ctx: ctx, m: map[int64]string{}}
	p := &skillPage{Admin: me.A.IsAdmin(), UID: k.UID, Name: v.Name, Identifier: k.Identifier, Source: rv.Source,
		Trust: me.T.Get("skills.trust." + string(rv.Source.Trust)), Backend: rv.Source.Type == skill.Backend,
		Enabled: k.Enabled, Orphaned: k.Orphaned, Process: v.Process, Desc: v.Description, Digest: k.Digest(),
		Short: short(k.Digest()), Instructs: rv.Reason == "", Why: reasonText(me, rv.Reason),
		Body: markdown(v.Body), Diff: rv.Diff, Markdown: string(skill.Render(v))}
	if v.AllowedTools != nil {
		p.Tools = strings.Join(v.AllowedTools, ", ")
		if p.Tools == "" {
			p.Tools = me.T.Get("skills.tools.none")
		}
	}
	if rv.LastApproved != nil {
		p.Since = me.T.Get("skills.diff.since", short(rv.LastApproved.Digest), when(rv.LastApproved.ApprovedAt))
	}
	latest := map[string]skill.Approval{} // the latest row of each digest decides
	for _, a := range rv.Approvals {
		latest[a.Digest] = a
		p.Approvals = append(p.Approvals, approvalRow{Digest: a.Digest, Short: short(a.Digest), By: n.of(a.ApprovedBy),
			At: when(a.ApprovedAt), RevokedBy: n.of(a.RevokedBy), RevokedAt: when(a.RevokedAt), Revoked: a.Revoked(),
			Current: a.Digest == p.Digest})
	}
	seen := map[string]bool{}
	for i := len(rv.Approvals) - 1; i >= 0; i-- {
		d := rv.Approvals[i].Digest
		if a := latest[d]; !a.Revoked() && !seen[d] {
			seen[d] = true
			p.Revocable = append(p.Revocable, revocable{Digest: d, Short: short(d)})
		}
	}
	if a, ok := latest[p.Digest]; ok && !a.Revoked() && a.Source == k.Source {
		p.Approved = true
	}
	for i := len(rv.History) - 1; i >= 0; i-- {
		h := rv.History[i]
		p.History = append(p.History, historyRow{By: n.of(h.User), Short: short(h.Digest), At: when(h.At)})
	}
	return p, nil
}

// pathSkill reads the skill uid of the path; a bad one is 404.
func pathSkill(r *http.Request, name string) (int64, bool) {
	uid, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	return uid, err == nil && uid > 0
}

func (u *UI) handleSkillPage(w http.ResponseWriter, r *http.Request, me *user) {
	uid, ok := pathSkill(r, "uid")
	if !ok {
		u.fail(w, r, me, skill.ErrNotFound)
		return
	}
	p, err := u.skillPage(r.Context(), me, uid)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	u.show(w, r, me, "admin_skill", "skills.skill.title", p)
}

// afterAction shows the skill page as it is now with the action's outcome:
// on success the notice, on failure the refusal — for a stale digest the
// page then shows the new text's diff and carries the new digest.
func (u *UI) afterAction(w http.ResponseWriter, r *http.Request, me *user, uid int64, actErr error, notice string, keep func(*skillPage)) {
	ctx := r.Context()
	p, err := u.skillPage(ctx, me, uid)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	p.Error, p.Notice = u.outcome(ctx, me, "skill action", actErr, notice)
	if keep != nil {
		keep(p)
	}
	u.show(w, r, me, "admin_skill", "skills.skill.title", p)
}

// formDigest reads the digest a form carries; a malformed one is bad input.
func formDigest(r *http.Request) (string, error) {
	d := r.PostFormValue("digest")
	if err := skill.ParseDigest(d); err != nil {
		return "", &skill.InvalidError{Field: "digest", Msg: err.Error()}
	}
	return d, nil
}

// handleSkillApprove approves the digest the page showed (its hidden
// field): the store refuses a digest that is no longer current
// (stale_digest), and the page then says so and shows the new diff.
func (u *UI) handleSkillApprove(w http.ResponseWriter, r *http.Request, me *user) {
	uid, ok := pathSkill(r, "uid")
	if !ok {
		u.fail(w, r, me, skill.ErrNotFound)
		return
	}
	d, err := formDigest(r)
	if err == nil {
		_, err = u.Skills.Approve(r.Context(), me.A.UID, uid, d)
	}
	u.afterAction(w, r, me, uid, err, "skills.approved", nil)
}

// handleSkillRevoke revokes every approval of one digest.
func (u *UI) handleSkillRevoke(w http.ResponseWriter, r *http.Request, me *user) {
	uid, ok := pathSkill(r, "uid")
	if !ok {
		u.fail(w, r, me, skill.ErrNotFound)
		return
	}
	d, err := formDigest(r)
	if err == nil {
		err = u.Skills.Revoke(r.Context(), me.A.UID, uid, d)
	}
	u.afterAction(w, r, me, uid, err, "skills.revoked", nil)
}

// handleSkillSwitch enables or disables a skill site-wide.
func (u *UI) handleSkillSwitch(enabled bool) screenFunc {
	notice := "skills.disabledNotice"
	if enabled {
		notice = "skills.enabledNotice"
	}
	return func(w http.ResponseWriter, r *http.Request, me *user) {
		uid, ok := pathSkill(r, "uid")
		if !ok {
			u.fail(w, r, me, skill.ErrNotFound)
			return
		}
		err := u.Skills.SetEnabled(r.Context(), me.A.UID, uid, enabled)
		u.afterAction(w, r, me, uid, err, notice, nil)
	}
}

// handleSkillEdit stores the textarea's SKILL.md as a new version of a
// backend skill (skill.Parse, then skill.Store.SkillUpdate). A text that does
// not parse is shown again with the parser's message at its line, and
// nothing is stored.
func (u *UI) handleSkillEdit(w http.ResponseWriter, r *http.Request, me *user) {
	uid, ok := pathSkill(r, "uid")
	if !ok {
		u.fail(w, r, me, skill.ErrNotFound)
		return
	}
	text := strings.ReplaceAll(r.PostFormValue("markdown"), "\r\n", "\n")
	v, err := skill.Parse([]byte(text))
	if err == nil {
		_, err = u.Skills.Update(r.Context(), skill.UpdateParams{UID: uid, Version: v, Actor: me.A.UID})
	}
	var keep func(*skillPage)
	if err != nil {
		keep = func(p *skillPage) {
			p.Markdown = text
			var parse *skill.ParseError
			if errors.As(err, &parse) && parse.Line > 0 {
				p.ErrLine = parse.Line
				for i, l := range strings.Split(text, "\n") {
					nl := numberedLine{N: i + 1, Text: l}
					if i+1 == parse.Line {
						nl.Err = parse.Msg
					}
					p.Lines = append(p.Lines, nl)
				}
			}
		}
	}
	u.afterAction(w, r, me, uid, err, "skills.saved", keep)
}
