package web

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"waymark/internal/access"
	"waymark/internal/site"
)

// The groups screen: subgroups, mounts, allowed languages,
// tables to read and modify, non-exclude fields and grants. The handlers
// call what the admin JSON API calls (access.ListGroups/GetGroup/
// CreateGroup/UpdateGroup), which check that tables, fields, languages,
// pages and subgroups exist.

type groupListData struct {
	Groups   []access.Group
	Titles   map[int64]string
	External bool // beside TYPO3: groups are TYPO3's, only grants are set here
}

type groupData struct {
	formState
	New       bool
	External  bool // beside TYPO3: the group is TYPO3's; the form sets the grants only
	G         access.Group
	Groups    []access.Group // the other groups, as subgroups
	Languages []site.Language
}

func (d *groupData) HasSubgroup(g int64) bool   { return slices.Contains(d.G.Subgroups, g) }
func (d *groupData) HasLanguage(l int64) bool   { return slices.Contains(d.G.Languages, l) }
func (d *groupData) HasGrant(g string) bool     { return slices.Contains(d.G.Grants, g) }
func (d *groupData) Grants() []string           { return grantNames }
func (d *groupData) Mounts() string             { return joinInts(d.G.Mounts) }
func (d *groupData) TablesSelect() string       { return strings.Join(d.G.TablesSelect, ", ") }
func (d *groupData) TablesModify() string       { return strings.Join(d.G.TablesModify, ", ") }
func (d *groupData) NonExcludeFields() string   { return strings.Join(d.G.NonExcludeFields, ", ") }
func (d *groupListData) Title(uid int64) string { return d.Titles[uid] }

func (u *UI) handleGroupList(w http.ResponseWriter, r *http.Request, me *user) {
	list, err := access.ListGroups(r.Context(), u.Directory, u.DB)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	d := &groupListData{Groups: list, Titles: map[int64]string{}, External: access.External(u.Directory)}
	for _, g := range list {
		d.Titles[g.UID] = g.Title
	}
	p := u.newPage(me, "admin", "admin.groups.title")
	p.Data = d
	u.render(w, r, "admin_groups", "layout", p, http.StatusOK)
}

func (u *UI) showGroup(w http.ResponseWriter, r *http.Request, me *user, d *groupData, name string, status int) {
	d.External = access.External(u.Directory)
	groups, err := access.ListGroups(r.Context(), u.Directory, u.DB)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	for _, g := range groups {
		if g.UID != d.G.UID || d.New {
			d.Groups = append(d.Groups, g)
		}
	}
	if d.Languages, err = u.Site.Languages(r.Context(), me.A); err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "admin", "admin.group.new")
	if !d.New {
		p.Title = me.T.Get("admin.group.title", d.G.Title)
	}
	p.Data = d
	u.render(w, r, "admin_group", name, p, status)
}

func (u *UI) handleGroupNew(w http.ResponseWriter, r *http.Request, me *user) {
	u.showGroup(w, r, me, &groupData{New: true}, "layout", http.StatusOK)
}

func (u *UI) handleGroupPage(w http.ResponseWriter, r *http.Request, me *user) {
	uid, ok := pathUID(r)
	if !ok {
		u.notFound(w, r, me)
		return
	}
	g, err := access.GetGroup(r.Context(), u.Directory, u.DB, uid)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	d := &groupData{G: g}
	if r.URL.Query().Get("saved") != "" {
		d.Notice = me.T.Get("admin.saved")
	}
	u.showGroup(w, r, me, d, "layout", http.StatusOK)
}

func readGroup(f *formReader, uid int64) access.Group {
	return access.Group{UID: uid, Title: strings.TrimSpace(f.str("title")), TablesSelect: f.words("tablesSelect"),
		TablesModify: f.words("tablesModify"), NonExcludeFields: f.words("nonExcludeFields"), Languages: f.ints("languages"),
		Mounts: f.ints("mounts"), Subgroups: f.ints("subgroups"), Grants: f.words("grants")}
}

func (u *UI) handleGroupCreate(w http.ResponseWriter, r *http.Request, me *user) {
	d := &groupData{New: true}
	f := newFormReader(r, me, &d.formState)
	d.G = readGroup(f, 0)
	if !d.failed() {
		g, err := access.CreateGroup(r.Context(), u.Source, u.Directory, u.DB, d.G)
		if err == nil {
			redirect(w, r, fmt.Sprintf("/admin/groups/%d?saved=1", g.UID))
			return
		}
		u.refusal(r, me, &d.formState, err, "title")
	}
	u.showGroup(w, r, me, d, "group-form", formStatus(r))
}

func (u *UI) handleGroupSave(w http.ResponseWriter, r *http.Request, me *user) {
	uid, ok := pathUID(r)
	if !ok {
		u.notFound(w, r, me)
		return
	}
	old, err := access.GetGroup(r.Context(), u.Directory, u.DB, uid)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	d := &groupData{}
	f := newFormReader(r, me, &d.formState)
	if access.External(u.Directory) { // the form sets the grants only: the rest is TYPO3's
		d.G = old
		d.G.Grants = f.words("grants")
		if !d.failed() {
			if _, err := access.SetGroupGrants(r.Context(), u.Directory, u.DB, uid, d.G.Grants); err == nil {
				redirect(w, r, fmt.Sprintf("/admin/groups/%d?saved=1", uid))
				return
			} else {
				u.refusal(r, me, &d.formState, err, "grants")
			}
		}
		u.showGroup(w, r, me, d, "group-form", formStatus(r))
		return
	}
	d.G = readGroup(f, uid)
	if !d.failed() {
		if _, err := access.UpdateGroup(r.Context(), u.Source, u.Directory, u.DB, d.G); err == nil {
			redirect(w, r, fmt.Sprintf("/admin/groups/%d?saved=1", uid))
			return
		} else {
			u.refusal(r, me, &d.formState, err, "title")
		}
	}
	u.showGroup(w, r, me, d, "group-form", formStatus(r))
}
