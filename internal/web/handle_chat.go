package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"waymark/internal/chat"
	"waymark/internal/llmconfig"
	"waymark/internal/process"
	"waymark/internal/site"
)

type chatData struct {
	List    []convItem
	Conv    *convView
	Picker  *pickerData
	Skills  []process.CatalogueEntry // the slash menu of the conversation's configuration
	Preview *previewView
	Labels  map[string]string // texts the live script shows
}

type convItem struct {
	ID                     int64
	Title, Language, Skill string
	Status                 string // catalogue text
	Current                bool
}

type pickerData struct {
	Configs   []llmconfig.Configuration // shown when there is a choice
	Config    int64
	Tree      []site.Node
	Languages []site.Language
	Skills    []process.CatalogueEntry
	Page      int64
	Language  int64
	Skill     int64
	Error     string
}

// scriptLabels are the catalogue texts app.js shows (activity, announcements).
var scriptLabels = []string{"activity.thinking", "activity.reading", "activity.proposing", "activity.tool", "activity.progress",
	"activity.highlight", "announce.card", "announce.progress", "announce.highlight", "announce.done", "slash.none",
	"live.offline", "live.reconnecting", "live.expired", "live.login", "live.failed"}

func labelsFor(me *user) map[string]string {
	out := map[string]string{}
	for _, k := range scriptLabels {
		out[k] = me.T.Get(k)
	}
	return out
}

// sidebar lists the user's conversations, newest first (the chat API's
// order), as items: their states without their transcripts.
func (u *UI) sidebar(ctx context.Context, me *user, current int64) ([]convItem, error) {
	list, err := u.Chat.Items(ctx, me.A.UID)
	if err != nil {
		return nil, err
	}
	langs, err := u.Site.Languages(ctx, me.A)
	if err != nil {
		return nil, err
	}
	out := make([]convItem, 0, len(list))
	for _, v := range list {
		it := convItem{ID: v.ID, Current: v.ID == current, Status: me.T.Get(listState(v))}
		it.Title = u.Site.Title(ctx, me.A, v.Page, v.Language)
		if it.Title == "" {
			it.Title = me.T.Get("chat.pageNumber", v.Page)
		}
		it.Language = strconv.FormatInt(v.Language, 10)
		for _, l := range langs {
			if l.UID == v.Language {
				it.Language = l.Title
			}
		}
		if v.Skill != nil {
			it.Skill = u.skillName(ctx, me, v.Skill.UID, v.Skill.Name)
		}
		out = append(out, it)
	}
	return out, nil
}

// listState is the catalogue key of what the conversation list says of a
// conversation: what its header says where a tour is completed or ended.
func listState(it chat.Item) string {
	switch {
	case it.Status == chat.Idle && it.Completed:
		return "status.completed"
	case it.Status == chat.Idle && it.Ended:
		return "status.ended"
	}
	return "status." + string(it.Status)
}

func (u *UI) picker(ctx context.Context, me *user, r *http.Request) (*pickerData, error) {
	p := &pickerData{}
	var err error
	if p.Tree, err = u.Site.Tree(ctx, me.A); err != nil {
		return nil, err
	}
	if p.Languages, err = u.Site.Languages(ctx, me.A); err != nil {
		return nil, err
	}
	if p.Configs, err = u.Configs.Usable(ctx, me.A); err != nil {
		return nil, err
	}
	// No configuration, or none usable, shows no skills; a failed read is
	// the failure, not an empty picker.
	switch cfg, err := u.Chat.ConfigurationFor(ctx, me.A.UID); {
	case errors.Is(err, chat.ErrNoConfig), errors.Is(err, chat.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		p.Config = cfg.UID
		if p.Skills, err = u.Catalogue.ForActor(ctx, me.A.UID, cfg.UID); err != nil && !errors.Is(err, process.ErrNotFound) {
			return nil, err
		}
		p.Skills = u.localCatalogue(ctx, me, p.Skills)
	}
	q := r.URL.Query()
	p.Page, _ = strconv.ParseInt(q.Get("page"), 10, 64)
	p.Language, _ = strconv.ParseInt(q.Get("language"), 10, 64)
	p.Skill, _ = strconv.ParseInt(q.Get("skill"), 10, 64)
	if c, err := strconv.ParseInt(q.Get("configuration"), 10, 64); err == nil {
		for _, cfg := range p.Configs {
			if cfg.UID == c {
				p.Config = c
			}
		}
	}
	// A language the editor may not edit is not chosen: the first she may
	// edit is (the select shows it selected, and the titles follow it).
	mayEdit := false
	for _, l := range p.Languages {
		mayEdit = mayEdit || l.UID == p.Language
	}
	if !mayEdit && len(p.Languages) > 0 {
		p.Language = p.Languages[0].UID
	}
	p.Tree = u.translatedTree(ctx, me, p.Tree, p.Language)
	return p, nil
}

// translatedTree shows each page under its title in language where a live
// translation exists (the default-language title otherwise).
func (u *UI) translatedTree(ctx context.Context, me *user, nodes []site.Node, language int64) []site.Node {
	if language <= 0 {
		return nodes
	}
	out := make([]site.Node, len(nodes))
	for i, n := range nodes {
		for _, l := range n.Translations {
			if l == language {
				if t := u.Site.Title(ctx, me.A, n.UID, language); t != "" {
					n.Title = t
				}
			}
		}
		n.Children = u.translatedTree(ctx, me, n.Children, language)
		out[i] = n
	}
	return out
}

// handlePicker renders the picker alone for the values chosen so far (the
// language select asks for it: the page titles follow the language).
func (u *UI) handlePicker(w http.ResponseWriter, r *http.Request, me *user) {
	p := u.newPage(me, "chat", "chat.title")
	pk, err := u.picker(r.Context(), me, r)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	p.Chat = &chatData{Picker: pk}
	u.render(w, r, "chat", "picker", p, http.StatusOK)
}

// handleChatHome renders the chat without a conversation: the sidebar and
// the page picker that starts one (prefilled from a dashboard link).
func (u *UI) handleChatHome(w http.ResponseWriter, r *http.Request, me *user) {
	ctx := r.Context()
	p := u.newPage(me, "chat", "chat.title")
	d := &chatData{Labels: labelsFor(me)}
	var err error
	if d.List, err = u.sidebar(ctx, me, 0); err != nil {
		u.fail(w, r, me, err)
		return
	}
	if d.Picker, err = u.picker(ctx, me, r); err != nil {
		u.fail(w, r, me, err)
		return
	}
	p.Chat = d
	u.render(w, r, "chat", "layout", p, http.StatusOK)
}

// handleChatStart starts a conversation about the chosen page and language
// (chat.Service.Start decides what is allowed); with a process it sends the
// editor's opening message, so the tour begins at once.
func (u *UI) handleChatStart(w http.ResponseWriter, r *http.Request, me *user) {
	ctx := r.Context()
	page, _ := strconv.ParseInt(r.PostFormValue("page"), 10, 64)
	lang, _ := strconv.ParseInt(r.PostFormValue("language"), 10, 64)
	skill, _ := strconv.ParseInt(r.PostFormValue("skill"), 10, 64)
	cfg, _ := strconv.ParseInt(r.PostFormValue("configuration"), 10, 64)
	fail := func(msg string) {
		p := u.newPage(me, "chat", "chat.title")
		pk, err := u.picker(ctx, me, r)
		if err != nil {
			u.fail(w, r, me, err)
			return
		}
		pk.Page, pk.Language, pk.Skill, pk.Error = page, lang, skill, msg
		if cfg != 0 {
			pk.Config = cfg
		}
		p.Chat = &chatData{Picker: pk}
		u.render(w, r, "chat", "picker", p, http.StatusOK)
	}
	if page <= 0 {
		fail(me.T.Get("picker.choosePage"))
		return
	}
	v, err := u.Chat.Start(ctx, me.A.UID, page, lang, skill, cfg)
	if err != nil {
		u.logErr(ctx, "start conversation", err)
		msg := u.errorText(me, errCode(err))
		if code := errCode(err); skill > 0 && cfg > 0 && (code == "skill_unavailable" || code == "second_approver_required") {
			// A four-eyes assistant offers no process: say why, and what to choose.
			if c, err := u.Configs.Get(ctx, cfg); err == nil && c.RequireSecondApprover {
				msg = me.T.Get("picker.fourEyesNoProcess")
			}
		}
		fail(msg)
		return
	}
	if v.Skill != nil && v.Skill.Process {
		if err := u.Chat.Send(ctx, me.A.UID, v.ID, me.T.Get("chat.startMessage", u.skillName(ctx, me, v.Skill.UID, v.Skill.Name))); err != nil {
			u.logErr(ctx, "start tour", err)
		}
	}
	redirect(w, r, fmt.Sprintf("/chat/%d", v.ID))
}

// fail renders an error the user can act on.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, me *user, err error) {
	u.logErr(r.Context(), "screen", err)
	status, code := u.API.ClassifyRequest(w, r, err) // a database that does not answer: 503 with Retry-After
	http.Error(w, u.errorText(me, code), status)
}
