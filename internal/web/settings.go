package web

import (
	"errors"
	"net/http"
	"strconv"

	"waymark/internal/access"
	"waymark/internal/auth"
)

// settingsData is the user's own settings screen: the language of the UI
// and of the assistant (be_users.backend_language, which the chat service
// reads for the assistant's replies).
type settingsData struct {
	Languages []string
	Current   string
	Notice    string
	Error     string
	// Managed: beside TYPO3 the language is TYPO3's; the page says where to change it.
	Managed bool
	Tokens  *tokensData
}

// tokensData is the reader's own API tokens, each revocable.
type tokensData struct {
	List    []auth.TokenInfo
	Revoked bool
	Error   string
}

func (u *UI) registerSettings(m mountFunc) {
	m("GET /settings", u.authed(u.handleSettings))
	m("POST /settings", u.authed(u.handleSettingsSave))
	m("POST /settings/tokens/{id}/revoke", u.authed(u.handleOwnTokenRevoke))
}

func (u *UI) handleSettings(w http.ResponseWriter, r *http.Request, me *user) {
	d := &settingsData{Languages: access.UILanguages, Current: me.T.Lang(), Managed: access.External(u.Directory), Tokens: &tokensData{}}
	var err error
	if d.Tokens.List, err = auth.ListTokens(r.Context(), u.DB, me.A.UID); err != nil {
		u.fail(w, r, me, err)
		return
	}
	if r.URL.Query().Get("saved") == "1" {
		d.Notice = me.T.Get("settings.saved", me.T.Get("settings.lang."+d.Current))
	}
	u.showSettings(w, r, me, d, "layout", http.StatusOK)
}

// handleSettingsSave stores the chosen language; the page is then shown
// again in it. Anything but an offered language is refused at the field
// and nothing is stored.
func (u *UI) handleSettingsSave(w http.ResponseWriter, r *http.Request, me *user) {
	lang := r.PostFormValue("language")
	err := access.SetBackendLanguage(r.Context(), u.Directory, u.DB, me.A.UID, lang)
	if err == nil {
		redirect(w, r, "/settings?saved=1")
		return
	}
	d := &settingsData{Languages: access.UILanguages, Current: me.T.Lang()}
	var fe *access.FieldError
	switch {
	case errors.As(err, &fe):
		d.Error = me.T.Get("settings.badLanguage")
	case errors.Is(err, access.ErrManagedElsewhere):
		d.Managed, d.Error = true, me.T.Get("settings.managedElsewhere")
	default:
		u.logErr(r.Context(), "settings", err)
		d.Error = u.errorText(me, errCode(err))
	}
	u.showSettings(w, r, me, d, "settings-form", formStatus(r))
}

func (u *UI) showSettings(w http.ResponseWriter, r *http.Request, me *user, d *settingsData, name string, status int) {
	p := u.newPage(me, "settings", "settings.heading")
	p.Data = d
	u.render(w, r, "settings", name, p, status)
}

// handleOwnTokenRevoke revokes one of the reader's own API tokens
// (auth.DeleteToken): it is refused from the next request on. The page asked
// first (hx-confirm); a token that is not the reader's is "not found".
func (u *UI) handleOwnTokenRevoke(w http.ResponseWriter, r *http.Request, me *user) {
	d := &tokensData{}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err == nil && id > 0 {
		if d.Revoked, err = auth.DeleteToken(r.Context(), u.DB, me.A.UID, id); err != nil {
			u.fail(w, r, me, err)
			return
		}
	}
	if !d.Revoked {
		d.Error = me.T.Get("error.not_found")
	}
	if d.List, err = auth.ListTokens(r.Context(), u.DB, me.A.UID); err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "settings", "settings.heading")
	p.Data = &settingsData{Tokens: d}
	u.render(w, r, "settings", "settings-tokens", p, http.StatusOK)
}
