package web

import (
	"context"
	"net/http"
	"strconv"

	"waymark/internal/chat"
	"waymark/internal/site"
)

type previewView struct {
	site.Preview
	Locale    string
	Highlight string // "table:uid"
	Error     string
}

func pathID(r *http.Request) int64 {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	return id
}

// conversationData loads a conversation, its preview and the slash menu.
func (u *UI) conversationData(ctx context.Context, me *user, v chat.View) *chatData {
	d := &chatData{Conv: u.convView(ctx, me, v), Labels: labelsFor(me)}
	if list, err := u.Catalogue.ForActor(ctx, me.A.UID, v.Configuration); err == nil {
		d.Skills = u.localCatalogue(ctx, me, list)
	}
	d.Preview = u.preview(ctx, me, d.Conv)
	return d
}

func (u *UI) preview(ctx context.Context, me *user, cv *convView) *previewView {
	pv := &previewView{Locale: cv.Locale, Highlight: cv.Highlight}
	p, err := u.Site.Preview(ctx, me.A, cv.Page, cv.Language)
	if err != nil {
		pv.Error = u.errorText(me, errCode(err))
		return pv
	}
	pv.Preview = p
	return pv
}

// handleConversation renders the chat page of one conversation.
func (u *UI) handleConversation(w http.ResponseWriter, r *http.Request, me *user) {
	ctx := r.Context()
	v, err := u.Chat.Get(ctx, me.A.UID, pathID(r))
	if errCode(err) == "not_found" {
		// A page of its own, with the way back to the editor's conversations.
		u.render(w, r, "notfound", "layout", u.newPage(me, "chat", "notFound.heading"), http.StatusNotFound)
		return
	}
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "chat", "chat.title")
	p.Chat = u.conversationData(ctx, me, v)
	if p.Chat.List, err = u.sidebar(ctx, me, v.ID); err != nil {
		u.fail(w, r, me, err)
		return
	}
	u.render(w, r, "chat", "layout", p, http.StatusOK)
}

// handleConversationView renders the conversation region and, out of band,
// the preview: what the live script swaps in when the stream reports a change.
func (u *UI) handleConversationView(w http.ResponseWriter, r *http.Request, me *user) {
	v, err := u.Chat.Get(r.Context(), me.A.UID, pathID(r))
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	u.renderConversation(w, r, me, v, "")
}

// renderConversation answers an htmx request with the conversation partial
// (with an error text when an action was refused) and the preview out of band.
func (u *UI) renderConversation(w http.ResponseWriter, r *http.Request, me *user, v chat.View, errText string) {
	p := u.newPage(me, "chat", "chat.title")
	p.Chat = u.conversationData(r.Context(), me, v)
	var err error
	if p.Chat.List, err = u.sidebar(r.Context(), me, v.ID); err != nil {
		u.fail(w, r, me, err)
		return
	}
	if errText != "" {
		p.Chat.Conv.ErrorText = errText
		w.Header().Set(refusedHeader, "1")
	}
	p.OOB = true
	u.render(w, r, "chat", "conversation-update", p, http.StatusOK)
}

// act runs a conversation action and answers with the conversation as it is
// now; a refusal shows its text in the conversation and changes nothing.
func (u *UI) act(w http.ResponseWriter, r *http.Request, me *user, do func(ctx context.Context, id int64) error) {
	ctx := r.Context()
	id := pathID(r)
	actErr := do(ctx, id)
	v, err := u.Chat.Get(ctx, me.A.UID, id)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	text := ""
	if actErr != nil {
		u.logErr(ctx, "conversation action", actErr)
		text = u.errorText(me, errCode(actErr))
	}
	u.renderConversation(w, r, me, v, text)
}
