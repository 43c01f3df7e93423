package web

import (
	"net/http"
)

// registerAdmin mounts the administration home and the configurations,
// users and groups, and runs screens. Every
// route but the home is for active administrators only (adminOnly); the
// home is also open to holders of the skill_approve grant, who see only
// the skills link.
func (u *UI) registerAdmin(m mountFunc) {
	m("GET /admin", u.authed(u.handleAdminHome))
	m("GET /admin/configurations", u.authed(u.adminOnly(u.handleConfigurationList)))
	m("GET /admin/configurations/new", u.authed(u.adminOnly(u.handleConfigurationNew)))
	m("POST /admin/configurations", u.authed(u.adminOnly(u.handleConfigurationCreate)))
	m("GET /admin/configurations/{uid}", u.authed(u.adminOnly(u.handleConfigurationPage)))
	m("POST /admin/configurations/{uid}", u.authed(u.adminOnly(u.handleConfigurationSave)))
	m("POST /admin/configurations/{uid}/test", u.authed(u.adminOnly(u.handleConfigurationTest)))
	m("GET /admin/users", u.authed(u.adminOnly(u.handleUserList)))
	m("GET /admin/users/new", u.authed(u.adminOnly(u.handleUserNew)))
	m("POST /admin/users", u.authed(u.adminOnly(u.handleUserCreate)))
	m("GET /admin/users/{uid}", u.authed(u.adminOnly(u.handleUserPage)))
	m("POST /admin/users/{uid}", u.authed(u.adminOnly(u.handleUserSave)))
	m("POST /admin/users/{uid}/active", u.authed(u.adminOnly(u.handleUserActive)))
	m("POST /admin/users/{uid}/tokens", u.authed(u.adminOnly(u.handleUserToken)))
	m("POST /admin/users/{uid}/tokens/{id}/revoke", u.authed(u.adminOnly(u.handleUserTokenRevoke)))
	m("GET /admin/groups", u.authed(u.adminOnly(u.handleGroupList)))
	m("GET /admin/groups/new", u.authed(u.adminOnly(u.handleGroupNew)))
	m("POST /admin/groups", u.authed(u.adminOnly(u.handleGroupCreate)))
	m("GET /admin/groups/{uid}", u.authed(u.adminOnly(u.handleGroupPage)))
	m("POST /admin/groups/{uid}", u.authed(u.adminOnly(u.handleGroupSave)))
	m("GET /admin/runs", u.authed(u.adminOnly(u.handleRunList)))
	m("GET /admin/runs/{uuid}", u.authed(u.adminOnly(u.handleRunPage)))
	m("POST /admin/runs/{uuid}/cancel", u.authed(u.adminOnly(u.handleRunCancel)))
	m("POST /admin/runs/{uuid}/end-process", u.authed(u.adminOnly(u.handleRunEndProcess)))
	m("GET /admin/costs", u.authed(u.adminOnly(u.handleCosts)))
}

type screenFunc = func(w http.ResponseWriter, r *http.Request, me *user)

// adminOnly runs h for an active administrator; anyone else gets the 403
// page before anything is read or decoded, so known and unknown uids answer
// alike (the rule of the admin JSON API, API.md "Administration").
func (u *UI) adminOnly(h screenFunc) screenFunc {
	return func(w http.ResponseWriter, r *http.Request, me *user) {
		if !me.A.IsAdmin() {
			u.forbidden(w, r, me, "admin.forbidden.text")
			return
		}
		h(w, r, me)
	}
}

// forbidden renders the 403 page of the administration screens; textKey
// says who may open it (administrators, or also skill approvers).
func (u *UI) forbidden(w http.ResponseWriter, r *http.Request, me *user, textKey string) {
	p := u.newPage(me, "", "admin.forbidden.title")
	p.Data = textKey
	u.render(w, r, "admin_forbidden", "layout", p, http.StatusForbidden)
}

type adminHome struct {
	Skills bool // administrators and skill_approve holders
	Admin  bool // everything else
}

// handleAdminHome links the administration screens the viewer may use.
func (u *UI) handleAdminHome(w http.ResponseWriter, r *http.Request, me *user) {
	d := adminHome{Skills: me.A.MayReviewSkills(), Admin: me.A.IsAdmin()}
	if !d.Skills {
		u.forbidden(w, r, me, "admin.forbidden.reviewers")
		return
	}
	p := u.newPage(me, "admin", "admin.home.title")
	p.Data = d
	u.render(w, r, "admin_home", "layout", p, http.StatusOK)
}
