package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/llmconfig"
)

// The configurations screen. The handlers call what the admin
// JSON API calls (llmconfig.Store.Create/Update/List/Get,
// agent.Runtime.Probe). The provider key is write-only: the form's key
// field is always empty, the page says only whether a key is stored.

type configListData struct {
	Configs []llmconfig.Configuration
}

type configData struct {
	formState
	New    bool
	Cfg    llmconfig.Configuration
	Groups []access.Group
	Probe  *agent.ProbeResult
}

// Chosen reports whether group g is allowed.
func (d *configData) Chosen(g int64) bool {
	for _, a := range d.Cfg.AllowedGroups {
		if a == g {
			return true
		}
	}
	return false
}

// ToolGroups is the allowed tool groups as the form shows them.
func (d *configData) ToolGroups() string { return strings.Join(d.Cfg.ToolGroups, ", ") }

// Privacies are the privacy levels the form offers, least kept first.
func (d *configData) Privacies() []llmconfig.Privacy {
	return []llmconfig.Privacy{llmconfig.PrivacyNone, llmconfig.PrivacyMetadata, llmconfig.PrivacyRedacted, llmconfig.PrivacyFull}
}

// Providers are the provider types the form offers.
func (d *configData) Providers() []llmconfig.ProviderType {
	return []llmconfig.ProviderType{llmconfig.ProviderOpenAI, llmconfig.ProviderDemo, llmconfig.ProviderScript}
}

func (u *UI) handleConfigurationList(w http.ResponseWriter, r *http.Request, me *user) {
	list, err := u.Configs.List(r.Context())
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "admin", "admin.configs.title")
	p.Data = &configListData{Configs: list}
	u.render(w, r, "admin_configurations", "layout", p, http.StatusOK)
}

func (u *UI) configPage(ctx context.Context, me *user, d *configData) (*page, error) {
	groups, err := access.ListGroups(ctx, u.Directory, u.DB)
	if err != nil {
		return nil, err
	}
	d.Groups = groups
	title := "admin.config.title"
	if d.New {
		title = "admin.config.new"
	}
	p := u.newPage(me, "admin", title)
	if !d.New {
		p.Title = me.T.Get("admin.config.title", d.Cfg.Name)
	}
	p.Data = d
	return p, nil
}

func (u *UI) showConfig(w http.ResponseWriter, r *http.Request, me *user, d *configData, name string, status int) {
	p, err := u.configPage(r.Context(), me, d)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	u.render(w, r, "admin_configuration", name, p, status)
}

func (u *UI) handleConfigurationNew(w http.ResponseWriter, r *http.Request, me *user) {
	d := &configData{New: true, Cfg: llmconfig.Configuration{Active: true, ProviderType: llmconfig.ProviderOpenAI,
		ContextWindow: 128000, Privacy: llmconfig.DefaultPrivacy, MaxIterations: llmconfig.DefaultMaxIterations}}
	u.showConfig(w, r, me, d, "layout", http.StatusOK)
}

func (u *UI) handleConfigurationPage(w http.ResponseWriter, r *http.Request, me *user) {
	uid, ok := pathUID(r)
	if !ok {
		u.notFound(w, r, me)
		return
	}
	c, err := u.Configs.Get(r.Context(), uid)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	d := &configData{Cfg: c}
	if r.URL.Query().Get("saved") != "" {
		d.Notice = me.T.Get("admin.saved")
	}
	u.showConfig(w, r, me, d, "layout", http.StatusOK)
}

// readConfig reads the form into a configuration and the key to set (nil:
// keep the stored one).
func readConfig(f *formReader, uid int64) (llmconfig.Configuration, *string) {
	c := llmconfig.Configuration{UID: uid, Identifier: strings.TrimSpace(f.str("identifier")), Name: strings.TrimSpace(f.str("name")),
		Active: f.bool("active"), ProviderType: llmconfig.ProviderType(f.str("providerType")), BaseURL: strings.TrimSpace(f.str("baseUrl")),
		Model: strings.TrimSpace(f.str("model")), ContextWindow: f.int("contextWindow"), MaxOutputTokens: f.int("maxOutputTokens"),
		RequireSecondApprover: f.bool("requireSecondApprover"), Privacy: llmconfig.Privacy(f.str("privacy")),
		SystemPrompt: f.str("systemPrompt"), AllowedGroups: f.ints("allowedGroups"), ToolGroups: f.words("toolGroups"),
		MaxIterations: int(f.int("maxIterations")), TokenBudget: f.int("tokenBudget"),
		PriceInputPerMTok: f.float("priceInputPerMTok"), PriceOutputPerMTok: f.float("priceOutputPerMTok")}
	if s := f.str("script"); s != "" {
		c.Script = []byte(s)
	}
	var key *string
	switch k := f.str("apiKey"); {
	case f.bool("removeApiKey"):
		empty := ""
		key = &empty
	case k != "":
		key = &k
	}
	if key != nil {
		c.APIKey = *key
	}
	return c, key
}

func (u *UI) handleConfigurationCreate(w http.ResponseWriter, r *http.Request, me *user) {
	d := &configData{New: true}
	f := newFormReader(r, me, &d.formState)
	c, _ := readConfig(f, 0)
	d.Cfg = c
	d.Cfg.APIKey = ""
	if !d.failed() {
		saved, err := u.Configs.Create(r.Context(), c)
		if err == nil {
			redirect(w, r, fmt.Sprintf("/admin/configurations/%d?saved=1", saved.UID))
			return
		}
		u.refusal(r, me, &d.formState, err, "identifier")
	} else {
		u.refusal(r, me, &d.formState, u.Configs.Check(r.Context(), c), "identifier")
	}
	u.showConfig(w, r, me, d, "config-form", formStatus(r))
}

func (u *UI) handleConfigurationSave(w http.ResponseWriter, r *http.Request, me *user) {
	uid, ok := pathUID(r)
	if !ok {
		u.notFound(w, r, me)
		return
	}
	old, err := u.Configs.Get(r.Context(), uid)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	d := &configData{}
	f := newFormReader(r, me, &d.formState)
	c, key := readConfig(f, uid)
	d.Cfg = c
	d.Cfg.APIKey, d.Cfg.HasAPIKey = "", old.HasAPIKey
	if !d.failed() {
		if _, err := u.Configs.Update(r.Context(), c, key); err == nil {
			redirect(w, r, fmt.Sprintf("/admin/configurations/%d?saved=1", uid))
			return
		} else {
			u.refusal(r, me, &d.formState, err, "identifier")
		}
	} else {
		u.refusal(r, me, &d.formState, u.Configs.Check(r.Context(), c), "identifier")
	}
	u.showConfig(w, r, me, d, "config-form", formStatus(r))
}

// handleConfigurationTest makes the one tiny provider call of the stored
// configuration (agent.Runtime.Probe) and shows its answer or classified error.
func (u *UI) handleConfigurationTest(w http.ResponseWriter, r *http.Request, me *user) {
	uid, ok := pathUID(r)
	if !ok {
		u.notFound(w, r, me)
		return
	}
	res, err := u.Runtime.Probe(r.Context(), uid)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "admin", "admin.config.test")
	p.Data = &configData{Probe: &res}
	u.render(w, r, "admin_configuration", "config-probe", p, http.StatusOK)
}
