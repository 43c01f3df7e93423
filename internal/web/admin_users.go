package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"waymark/internal/access"
	"waymark/internal/auth"
	"waymark/internal/httpapi"
	"waymark/internal/site"
)

// The users screen: the handlers call what the admin JSON API
// calls (access.ListAccounts/GetAccount/CreateAccount/UpdateAccount,
// access.SetActive, access.IssueToken, auth.ListTokens). A password is
// set-only and a token is shown once, in the answer that created it.

type userListData struct {
	Users    []access.Account
	Groups   map[int64]string
	External bool // beside TYPO3: accounts are TYPO3's, only grants and tokens are set here
}

type userData struct {
	formState
	New       bool
	External  bool // beside TYPO3: the account is TYPO3's; the form sets the grants only
	Acc       access.Account
	Groups    []access.Group
	Languages []site.Language
	Tokens    []auth.TokenInfo
	Token     string // a token just created, shown this once
	Revoked   bool   // a token was just revoked
}

// Grants are the grants a user may hold.
func (d *userData) Grants() []string { return grantNames }

// grantNames are the grants the forms offer (access's known grants).
var grantNames = []string{access.GrantApprove, access.GrantSkillApprove}

// InGroup, HasLanguage and HasGrant tell the form what is chosen.
func (d *userData) InGroup(g int64) bool       { return slices.Contains(d.Acc.Groups, g) }
func (d *userData) HasLanguage(l int64) bool   { return slices.Contains(d.Acc.Languages, l) }
func (d *userData) HasGrant(g string) bool     { return slices.Contains(d.Acc.Grants, g) }
func (d *userData) Mounts() string             { return joinInts(d.Acc.Mounts) }
func (d *userData) BackendLanguages() []string { return []string{"de", "en"} }

// GroupTitle is the title of group uid, or its uid.
func (d *userData) GroupTitle(uid int64) string {
	for _, g := range d.Groups {
		if g.UID == uid {
			return g.Title
		}
	}
	return fmt.Sprint(uid)
}

func joinInts(l []int64) string {
	s := make([]string, len(l))
	for i, n := range l {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

func (u *UI) handleUserList(w http.ResponseWriter, r *http.Request, me *user) {
	ctx := r.Context()
	list, err := access.ListAccounts(ctx, u.Directory, u.DB)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	groups, err := access.ListGroups(ctx, u.Directory, u.DB)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	d := &userListData{Users: list, Groups: map[int64]string{}, External: access.External(u.Directory)}
	for _, g := range groups {
		d.Groups[g.UID] = g.Title
	}
	p := u.newPage(me, "admin", "admin.users.title")
	p.Data = d
	u.render(w, r, "admin_users", "layout", p, http.StatusOK)
}

func (u *UI) showUser(w http.ResponseWriter, r *http.Request, me *user, d *userData, name string, status int) {
	d.External = access.External(u.Directory)
	if err := u.userChoices(r.Context(), me, d); err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "admin", "admin.user.new")
	if !d.New {
		p.Title = me.T.Get("admin.user.title", d.Acc.Username)
	}
	p.Data = d
	u.render(w, r, "admin_user", name, p, status)
}

func (u *UI) userChoices(ctx context.Context, me *user, d *userData) error {
	var err error
	if d.Groups, err = access.ListGroups(ctx, u.Directory, u.DB); err != nil {
		return err
	}
	if d.Languages, err = u.Site.Languages(ctx, me.A); err != nil {
		return err
	}
	if !d.New {
		if d.Tokens, err = auth.ListTokens(ctx, u.DB, d.Acc.UID); err != nil {
			return err
		}
	}
	return nil
}

func (u *UI) handleUserNew(w http.ResponseWriter, r *http.Request, me *user) {
	u.showUser(w, r, me, &userData{New: true, Acc: access.Account{Active: true, BackendLanguage: "de"}}, "layout", http.StatusOK)
}

// account reads the user of the path; false when it answered already (not found).
func (u *UI) account(w http.ResponseWriter, r *http.Request, me *user) (access.Account, bool) {
	uid, ok := pathUID(r)
	if !ok {
		u.notFound(w, r, me)
		return access.Account{}, false
	}
	a, err := access.GetAccount(r.Context(), u.Directory, u.DB, uid)
	if err != nil {
		u.fail(w, r, me, err)
		return access.Account{}, false
	}
	return a, true
}

func (u *UI) handleUserPage(w http.ResponseWriter, r *http.Request, me *user) {
	a, ok := u.account(w, r, me)
	if !ok {
		return
	}
	d := &userData{Acc: a}
	switch r.URL.Query().Get("done") {
	case "saved":
		d.Notice = me.T.Get("admin.saved")
	case "disabled":
		d.Notice = me.T.Get("admin.user.disabledNotice")
	case "enabled":
		d.Notice = me.T.Get("admin.user.enabledNotice")
	}
	u.showUser(w, r, me, d, "layout", http.StatusOK)
}

// readUser reads the form into an account change; the account as the
// form shows it again goes to d.Acc. Active is not in the form (nil: true
// for a new user, unchanged otherwise): the disable/enable button sets it.
func readUser(f *formReader, d *userData, uid int64) access.AccountChange {
	ch := access.AccountChange{UID: uid, Username: strings.TrimSpace(f.str("username")), Admin: f.bool("admin"),
		ServiceAccount: f.bool("serviceAccount"), BackendLanguage: f.str("backendLanguage"), Groups: f.ints("groups"),
		Languages: f.ints("languages"), Mounts: f.ints("mounts"), Grants: f.words("grants")}
	if pw := f.str("password"); pw != "" {
		ch.Password = &pw
	}
	d.Acc.UID, d.Acc.Username, d.Acc.Admin, d.Acc.ServiceAccount = uid, ch.Username, ch.Admin, ch.ServiceAccount
	d.Acc.BackendLanguage, d.Acc.Groups, d.Acc.Languages, d.Acc.Mounts, d.Acc.Grants = ch.BackendLanguage, ch.Groups, ch.Languages, ch.Mounts, ch.Grants
	return ch
}

func (u *UI) handleUserCreate(w http.ResponseWriter, r *http.Request, me *user) {
	d := &userData{New: true}
	f := newFormReader(r, me, &d.formState)
	ch := readUser(f, d, 0)
	if !d.failed() {
		a, err := access.CreateAccount(r.Context(), u.Source, u.Directory, u.DB, ch, u.API.HashCost())
		if err == nil {
			redirect(w, r, fmt.Sprintf("/admin/users/%d?done=saved", a.UID))
			return
		}
		u.refusal(r, me, &d.formState, err, "username")
	} else {
		u.refusal(r, me, &d.formState, access.CheckAccount(r.Context(), u.Source, u.Directory, u.DB, ch), "username")
	}
	u.usernameTaken(r, me, d, ch)
	u.showUser(w, r, me, d, "user-form", formStatus(r))
}

// usernameTaken adds "taken" at the username when other fields were
// refused first (the store checks the name only once they are right), so
// the form lists every error in one answer.
func (u *UI) usernameTaken(r *http.Request, me *user, d *userData, ch access.AccountChange) {
	if d.Errors["username"] != "" || ch.Username == "" {
		return
	}
	if other, err := u.Directory.LoadUserByName(r.Context(), u.DB, ch.Username); err == nil && other.UID != ch.UID {
		d.Errors["username"] = me.T.Get("admin.error.taken")
	}
}

func (u *UI) handleUserSave(w http.ResponseWriter, r *http.Request, me *user) {
	old, ok := u.account(w, r, me)
	if !ok {
		return
	}
	uid := old.UID
	d := &userData{Acc: old}
	f := newFormReader(r, me, &d.formState)
	if access.External(u.Directory) { // the form sets the grants only: the rest is TYPO3's
		d.Acc.Grants = f.words("grants")
		if !d.failed() {
			_, err := access.SetUserGrants(r.Context(), u.Directory, u.DB, uid, d.Acc.Grants)
			if err == nil {
				redirect(w, r, fmt.Sprintf("/admin/users/%d?done=saved", uid))
				return
			}
			u.refusal(r, me, &d.formState, err, "grants")
		}
		u.showUser(w, r, me, d, "user-form", formStatus(r))
		return
	}
	ch := readUser(f, d, uid)
	if c, err := r.Cookie(httpapi.SessionCookie); err == nil {
		ch.KeepSession = c.Value // a new password of one's own keeps this session
	}
	if !d.failed() {
		if _, err := access.UpdateAccount(r.Context(), u.Source, u.Directory, u.DB, ch, u.API.HashCost()); err == nil {
			redirect(w, r, fmt.Sprintf("/admin/users/%d?done=saved", uid))
			return
		} else {
			u.refusal(r, me, &d.formState, err, "username")
		}
	} else {
		u.refusal(r, me, &d.formState, access.CheckAccount(r.Context(), u.Source, u.Directory, u.DB, ch), "username")
	}
	u.usernameTaken(r, me, d, ch)
	u.showUser(w, r, me, d, "user-form", formStatus(r))
}

// handleUserActive disables or enables a user (access.SetActive): a
// disabled user's sessions end at once and their tokens are refused from
// the next request on.
func (u *UI) handleUserActive(w http.ResponseWriter, r *http.Request, me *user) {
	uid, ok := pathUID(r)
	if !ok {
		u.notFound(w, r, me)
		return
	}
	active := r.PostFormValue("active") == "1"
	if _, err := access.SetActive(r.Context(), u.Source, u.Directory, u.DB, uid, active); err != nil {
		a, gerr := access.GetAccount(r.Context(), u.Directory, u.DB, uid)
		if gerr != nil {
			u.fail(w, r, me, gerr)
			return
		}
		d := &userData{Acc: a, formState: formState{Errors: map[string]string{}}}
		u.refusal(r, me, &d.formState, err, "username")
		u.showUser(w, r, me, d, "layout", formStatus(r))
		return
	}
	done := "disabled"
	if active {
		done = "enabled"
	}
	redirect(w, r, fmt.Sprintf("/admin/users/%d?done=%s", uid, done))
}

// handleUserToken creates an API token for the user and shows it this once
// (access.IssueToken); the page never shows it again.
func (u *UI) handleUserToken(w http.ResponseWriter, r *http.Request, me *user) {
	a, ok := u.account(w, r, me)
	if !ok {
		return
	}
	uid := a.UID
	d := &userData{Acc: a, formState: formState{Errors: map[string]string{}}}
	token, err := access.IssueToken(r.Context(), u.Directory, u.DB, uid, strings.TrimSpace(r.PostFormValue("label")), u.API.Now(), u.API.HashCost())
	if err != nil {
		u.refusal(r, me, &d.formState, err, "label")
	} else {
		d.Token = token
	}
	if d.Tokens, err = auth.ListTokens(r.Context(), u.DB, uid); err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "admin", "admin.user.tokens")
	p.Data = d
	u.render(w, r, "admin_user", "user-tokens", p, http.StatusOK)
}

// handleUserTokenRevoke revokes one API token of the user (auth.DeleteToken,
// as DELETE /api/admin/users/{uid}/tokens/{id}): it is refused from the next
// request on. The page asked first (hx-confirm); a token that is not the
// user's is "not found", and nothing changes.
func (u *UI) handleUserTokenRevoke(w http.ResponseWriter, r *http.Request, me *user) {
	a, ok := u.account(w, r, me)
	if !ok {
		return
	}
	d := &userData{Acc: a, formState: formState{Errors: map[string]string{}}}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	found := false
	if err == nil && id > 0 {
		if found, err = auth.DeleteToken(r.Context(), u.DB, a.UID, id); err != nil {
			u.fail(w, r, me, err)
			return
		}
	}
	if found {
		d.Revoked = true
	} else {
		d.Errors["token"] = me.T.Get("error.not_found")
	}
	if d.Tokens, err = auth.ListTokens(r.Context(), u.DB, a.UID); err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "admin", "admin.user.tokens")
	p.Data = d
	u.render(w, r, "admin_user", "user-tokens", p, http.StatusOK)
}
