package web

import (
	"context"
	"fmt"
	"html/template"
	"log/slog"
	"mime"
	"net/http"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/campaign"
	"waymark/internal/catalog"
	"waymark/internal/chat"
	"waymark/internal/content"
	"waymark/internal/httpapi"
	"waymark/internal/llmconfig"
	"waymark/internal/openpoint"
	"waymark/internal/process"
	"waymark/internal/site"
	"waymark/internal/skill"
	"waymark/internal/store"
)

// Deps are the services the screens call; all are required.
type Deps struct {
	API        *httpapi.Server
	Chat       *chat.Service
	OpenPoints *openpoint.Store
	Runtime    *agent.Runtime
	Site       *site.Site
	Catalogue  *process.Catalogue
	DB         *store.DB // for the administration and the names on inbox cards
	// Source and Directory are the installation's content source and user
	// directory (nil: the built-in ones).
	Source    content.Source
	Directory access.Directory
	Configs   *llmconfig.Store
	Ender     *process.Ender // ends a run's process (the runs screen)
	Skills    *skill.Store   // the skills and attachments screens
	// Campaigns serves the campaign screens (/campaigns…); nil leaves them out.
	Campaigns *campaign.Service
}

// Config tunes the UI; nil takes the defaults.
type Config struct {
	Logger *slog.Logger
	// TYPO3Backend is the URL of the TYPO3 backend editors sign in to when
	// Waymark is opened from TYPO3 (the bridge); the login page points there.
	TYPO3Backend string
}

// UI serves the screens.
type UI struct {
	Deps
	log          *slog.Logger
	typo3Backend string                        // Config.TYPO3Backend
	pages        map[string]*template.Template // by screen
}

// New parses the templates and returns the UI.
func New(d Deps, cfg *Config) (*UI, error) {
	for name, ok := range map[string]bool{"API": d.API != nil, "Chat": d.Chat != nil, "OpenPoints": d.OpenPoints != nil,
		"Runtime": d.Runtime != nil, "Site": d.Site != nil, "Catalogue": d.Catalogue != nil, "DB": d.DB != nil, "Configs": d.Configs != nil, "Ender": d.Ender != nil,
		"Skills": d.Skills != nil} {
		if !ok {
			return nil, fmt.Errorf("web.New: Deps.%s is required", name)
		}
	}
	if cfg == nil {
		cfg = &Config{}
	}
	d.Source, d.Directory = content.OrBuiltin(d.Source), access.OrBuiltin(d.Directory)
	u := &UI{Deps: d, log: cfg.Logger, typo3Backend: cfg.TYPO3Backend}
	if u.log == nil {
		u.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if u.pages, err = parseTemplates(); err != nil {
		return nil, err
	}
	return u, nil
}

// Register mounts every route of the UI on the API server (all in one place).
func (u *UI) Register() {
	var m mountFunc = func(pattern string, h func(w http.ResponseWriter, r *http.Request)) {
		u.API.Mount(pattern, http.HandlerFunc(h))
	}
	// The administration screens register in their own files.
	u.registerAdminSkills(m)
	u.registerAdmin(m)
	u.registerSettings(m)
	u.registerCampaigns(m)
	m("GET /{$}", u.handleRoot)
	m("GET /assets/{file}", u.handleAsset)
	m("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/assets/favicon.svg", http.StatusMovedPermanently)
	})
	m("GET /login", u.handleLoginPage)
	m("POST /login", u.handleLogin)
	m("GET /typo3/enter", u.handleTicket)
	m("POST /logout", u.authed(u.handleLogout))
	m("GET /chat", u.authed(u.handleChatHome))
	m("POST /chat", u.authed(u.handleChatStart))
	m("GET /chat/picker", u.authed(u.handlePicker))
	m("GET /chat/{id}", u.authed(u.handleConversation))
	m("GET /chat/{id}/view", u.authed(u.handleConversationView))
	m("POST /chat/{id}/messages", u.authed(u.handleMessage))
	m("POST /chat/{id}/answer", u.authed(u.handleAnswer))
	m("POST /chat/{id}/skill", u.authed(u.handleSkill))
	m("POST /chat/{id}/question", u.authed(u.handleQuestion))
	m("POST /chat/{id}/end-tour", u.authed(u.handleEndTour))
	m("POST /chat/{id}/stop", u.authed(u.handleStop))
	m("GET /dashboard", u.authed(u.handleDashboard))
	m("GET /inbox", u.authed(u.handleInbox))
	m("GET /inbox/view", u.authed(u.handleInboxView))
	m("GET /inbox/count", u.authed(u.handleInboxCount))
	m("POST /inbox/{uuid}", u.authed(u.handleInboxDecide))
}

func (u *UI) handleRoot(w http.ResponseWriter, r *http.Request) {
	to := "/login"
	if h, ok := u.home(r); ok {
		to = h
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// home is where a signed-in user starts (ok false: nobody is signed in): an
// administrator on the administration, everyone else in the chat.
func (u *UI) home(r *http.Request) (string, bool) {
	r2, err := u.API.Authenticate(r)
	if err != nil {
		return "", false
	}
	if httpapi.ActorFrom(r2.Context()).IsAdmin() {
		return "/admin", true
	}
	return "/chat", true
}

// errCode is the API's code of err ("internal" for anything unknown).
func errCode(err error) string {
	if err == nil {
		return ""
	}
	_, code := httpapi.Classify(err)
	return code
}

// logErr logs an error the user sees only as a code.
func (u *UI) logErr(ctx context.Context, msg string, err error) {
	if _, code := httpapi.Classify(err); code == "internal" {
		u.log.ErrorContext(ctx, msg, "err", err)
	}
}

func (u *UI) userName(ctx context.Context, uid int64) (string, error) {
	usr, err := u.Directory.LoadUser(ctx, u.DB, uid)
	if err != nil {
		return "", err
	}
	return usr.Username, nil
}

// formTextOK reports whether a form post's fields hold only text the
// database can store (no NUL byte, only UTF-8). A post that holds other text
// is refused before its handler runs — 400 with the sentence, nothing
// changed — as the JSON API refuses such a body; a body that does not parse
// as a form is left to the handler.
func formTextOK(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return true
	}
	parse := r.ParseForm
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		// The UI sends none, but the handlers would read one's fields all the same.
		parse = func() error { return r.ParseMultipartForm(maxMultipartMemory) }
	}
	if parse() != nil {
		return true
	}
	for k, vs := range r.PostForm {
		if store.CheckText(k) != nil {
			return false
		}
		for _, v := range vs {
			if store.CheckText(v) != nil {
				return false
			}
		}
	}
	return true
}

// maxMultipartMemory bounds the part of a multipart form post held in memory.
const maxMultipartMemory = 1 << 20

// refuseText answers a form post formTextOK refused, in the language t.
func refuseText(w http.ResponseWriter, t catalog.T) {
	w.Header().Set(refusedHeader, "invalid_text")
	http.Error(w, t.Get("error.invalid_text"), http.StatusBadRequest)
}
