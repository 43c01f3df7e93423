package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"waymark/internal/access"
	"waymark/internal/llmconfig"
	"waymark/internal/process"
	"waymark/internal/skill"
)

// The attachments screen: per configuration, the
// attached skills with their load mode, attach and detach, and the slash
// menu a chosen user would see (process.Catalogue.ForActor, as GET
// /api/admin/configurations/{uid}/process-skills?user= reads it).

type attachData struct {
	Config    llmconfig.Configuration
	Attached  []attachedRow
	Available []skillChoice
	Modes     []skill.LoadMode
	Users     []access.Account
	User      int64
	UserName  string
	Usable    bool
	Menu      []process.CatalogueEntry
	Error     string
	Notice    string
}

type attachedRow struct {
	UID        int64
	Name       string
	Identifier string
	Mode       skill.LoadMode
	Why        string
}

type skillChoice struct {
	UID  int64
	Name string
}

func (u *UI) attachData(ctx context.Context, me *user, cfg int64, userUID int64) (*attachData, error) {
	c, err := u.Configs.Get(ctx, cfg)
	if err != nil {
		return nil, err
	}
	atts, err := u.Skills.Attachments(ctx, cfg)
	if err != nil {
		return nil, err
	}
	ks, err := u.Skills.List(ctx, 0)
	if err != nil {
		return nil, err
	}
	srcs, err := u.Skills.SourceList(ctx)
	if err != nil {
		return nil, err
	}
	bySrc := map[int64]skill.Source{}
	for _, s := range srcs {
		bySrc[s.UID] = s
	}
	mode := map[int64]skill.LoadMode{}
	for _, a := range atts {
		mode[a.Skill] = a.Mode
	}
	d := &attachData{Config: c, Modes: []skill.LoadMode{skill.Always, skill.OnDemand}, User: userUID}
	for _, k := range ks {
		m, ok := mode[k.UID]
		if !ok {
			d.Available = append(d.Available, skillChoice{UID: k.UID, Name: k.Version.Name + " (" + k.Identifier + ")"})
			continue
		}
		why, err := u.Skills.Standing(ctx, k, bySrc[k.Source])
		if err != nil {
			return nil, err
		}
		d.Attached = append(d.Attached, attachedRow{UID: k.UID, Name: k.Version.Name, Identifier: k.Identifier, Mode: m,
			Why: reasonText(me, why)})
	}
	if d.Users, err = access.ListAccounts(ctx, u.Directory, u.DB); err != nil {
		return nil, err
	}
	if userUID > 0 {
		usr, err := u.Directory.LoadUser(ctx, u.DB, userUID)
		if err != nil {
			return nil, err
		}
		d.UserName = usr.Username
		d.Menu, err = u.Catalogue.ForActor(ctx, userUID, cfg)
		d.Menu = u.localCatalogue(ctx, me, d.Menu)
		d.Usable = true
		if errors.Is(err, process.ErrNotFound) {
			d.Usable, d.Menu, err = false, nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return d, nil
}

// pathConfig reads the configuration uid of the path.
func pathConfig(r *http.Request) (int64, bool) { return pathSkill(r, "cfg") }

// chosenUser reads ?user= (0: none chosen); a bad value is bad input.
func chosenUser(r *http.Request) (int64, error) {
	s := r.FormValue("user")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, &skill.InvalidError{Field: "user", Msg: "want the uid of a user"}
	}
	return n, nil
}

func (u *UI) handleAttachments(w http.ResponseWriter, r *http.Request, me *user) {
	cfg, ok := pathConfig(r)
	if !ok {
		u.fail(w, r, me, llmconfig.ErrNotFound)
		return
	}
	who, err := chosenUser(r)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	d, err := u.attachData(r.Context(), me, cfg, who)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	u.show(w, r, me, "admin_attachments", "skills.attach.title", d)
}

// handleAttach attaches a skill with a load mode, or changes its mode
// (skill.Store.Attach); a bad skill or mode changes nothing and says so.
func (u *UI) handleAttach(w http.ResponseWriter, r *http.Request, me *user) {
	cfg, ok := pathConfig(r)
	if !ok {
		u.fail(w, r, me, llmconfig.ErrNotFound)
		return
	}
	uid, err := strconv.ParseInt(r.PostFormValue("skill"), 10, 64)
	if err != nil || uid <= 0 {
		err = skillInvalid("skill")
	} else {
		err = u.Skills.Attach(r.Context(), cfg, uid, skill.LoadMode(r.PostFormValue("loadMode")))
	}
	u.afterAttach(w, r, me, cfg, err, "skills.attach.attached")
}

// handleDetach detaches a skill from the configuration (skill.Store.Detach).
func (u *UI) handleDetach(w http.ResponseWriter, r *http.Request, me *user) {
	cfg, ok := pathConfig(r)
	if !ok {
		u.fail(w, r, me, llmconfig.ErrNotFound)
		return
	}
	var err error
	if uid, ok := pathSkill(r, "skill"); ok {
		err = u.Skills.Detach(r.Context(), cfg, uid)
	} else {
		err = skillInvalid("skill")
	}
	u.afterAttach(w, r, me, cfg, err, "skills.attach.detached")
}

func (u *UI) afterAttach(w http.ResponseWriter, r *http.Request, me *user, cfg int64, actErr error, notice string) {
	ctx := r.Context()
	who, _ := chosenUser(r)
	d, err := u.attachData(ctx, me, cfg, who)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	d.Error, d.Notice = u.outcome(ctx, me, "skill attachment", actErr, notice)
	u.show(w, r, me, "admin_attachments", "skills.attach.title", d)
}
