package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"waymark/internal/agent"
	"waymark/internal/site"
)

type inboxData struct {
	Runs      []inboxRun
	Signature string // the waiting runs' digests; the live script compares it
	Error     string
	Notice    string
	Labels    map[string]string
}

type inboxRun struct {
	UUID      string
	Title     string // who asked ("Angefragt von erika")
	Card      *cardView
	PageTitle string // the page the card is about, in its language
	Page      int64
	Language  int64
	LangName  string
	Requested time.Time
	When      string // Requested in the reader's words
}

// mustDecide reports whether a waiting run is one the reader must decide:
// a card on a configuration that needs a second person, asked for by
// someone else. A card on a one-person configuration is its requester's
// to answer, in her conversation — never another reader's inbox item.
func (u *UI) mustDecide(ctx context.Context, me *user, st agent.Status, fourEyes map[int64]bool) bool {
	if st.Initiator == me.A.UID {
		return false
	}
	need, ok := fourEyes[st.Configuration]
	if !ok {
		cfg, err := u.Configs.Get(ctx, st.Configuration)
		need = err == nil && cfg.RequireSecondApprover
		fourEyes[st.Configuration] = need
	}
	return need
}

// subject is the page and language a waiting run is about: its
// conversation's, else the record its first call targets (a page, or the
// page a content element lies on, in the record's language).
func (u *UI) subject(ctx context.Context, st agent.Status) (page, lang int64, ok bool) {
	if page, lang, ok, err := u.Chat.RunSubject(ctx, st.UUID); err == nil && ok {
		return page, lang, true
	}
	for _, c := range st.Pending.Calls {
		if c.Target == nil || c.Target.UID <= 0 {
			continue
		}
		rec, err := u.Source.Get(ctx, u.DB, c.Target.Table, c.Target.UID)
		if err != nil {
			continue
		}
		if rec.Table == "pages" {
			page = rec.UID
			if rec.Language > 0 && rec.L10nParent > 0 {
				page = rec.L10nParent
			}
		} else {
			page = rec.PID
		}
		return page, max(rec.Language, 0), page > 0
	}
	return 0, 0, false
}

func (u *UI) inboxData(ctx context.Context, me *user) (*inboxData, error) {
	runs, err := u.Runtime.Inbox(ctx, me.A.UID)
	if err != nil {
		return nil, err
	}
	d := &inboxData{Labels: labelsFor(me)}
	var sig []string
	fourEyes := map[int64]bool{}
	for _, st := range runs {
		if st.Pending == nil || !u.mustDecide(ctx, me, st, fourEyes) {
			continue
		}
		pd := st.Pending
		c := &cardView{Digest: pd.TurnDigest, Blocked: pd.ApproveBlocked != "", Action: "/inbox/" + st.UUID, Target: "#inbox"}
		c.Answers = []string{"approve", "cancel"}
		if pd.Answers == "process" {
			c.Answers = []string{"approve", "variant", "skip", "keep"}
		}
		for _, call := range pd.Calls {
			k := u.callView(ctx, me, callParts{ID: call.ID, Tool: call.Tool, Heading: call.Heading,
				Target: call.Target, Preview: call.Preview, PreviewError: call.PreviewError, Landing: call.Landing})
			k.Search = searchView(me, site.SearchPreview(ctx, u.Source, u.DB, call.Target, call.Preview))
			c.Calls = append(c.Calls, k)
		}
		c.Heading = headingOf(me, c.Calls)
		title := me.T.Get("inbox.from", st.Initiator)
		if who, err := u.userName(ctx, st.Initiator); err == nil {
			title = me.T.Get("inbox.fromName", who)
		}
		it := inboxRun{UUID: st.UUID, Title: title, Card: c, Requested: st.CreatedAt, When: st.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")}
		if page, lang, ok := u.subject(ctx, st); ok {
			it.Page, it.Language = page, lang
			it.PageTitle = u.Site.Title(ctx, me.A, page, lang)
			if it.PageTitle == "" {
				it.PageTitle = me.T.Get("chat.pageNumber", page)
			}
			it.LangName, _ = u.languageOf(ctx, me, lang)
		}
		d.Runs = append(d.Runs, it)
		sig = append(sig, pd.TurnDigest)
	}
	d.Signature = strings.Join(sig, ",")
	return d, nil
}

// handleInboxCount renders the navigation's count of what waits for the
// reader's decision (polled, so it follows decisions taken anywhere).
func (u *UI) handleInboxCount(w http.ResponseWriter, r *http.Request, me *user) {
	d, err := u.inboxData(r.Context(), me)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "inbox", "inbox.title")
	p.Inbox = d
	u.render(w, r, "inbox", "inbox-count", p, http.StatusOK)
}

// handleInbox lists the runs waiting for the user's release (agent.Runtime.Inbox).
func (u *UI) handleInbox(w http.ResponseWriter, r *http.Request, me *user) {
	d, err := u.inboxData(r.Context(), me)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "inbox", "inbox.title")
	p.Inbox = d
	u.render(w, r, "inbox", "layout", p, http.StatusOK)
}

// handleInboxView renders the list alone (the live script swaps it in).
func (u *UI) handleInboxView(w http.ResponseWriter, r *http.Request, me *user) {
	d, err := u.inboxData(r.Context(), me)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	p := u.newPage(me, "inbox", "inbox.title")
	p.Inbox = d
	u.render(w, r, "inbox", "inbox-list", p, http.StatusOK)
}

// handleInboxDecide releases or denies a waiting run with the answer the
// card offered — carried out by a worker, as the runs API's approval
// (agent.Runtime.ApproveOnWorker) — then shows the list
// as it is now.
func (u *UI) handleInboxDecide(w http.ResponseWriter, r *http.Request, me *user) {
	ctx := r.Context()
	d := agent.Decision{TurnDigest: r.PostFormValue("turnDigest")}
	answer := r.PostFormValue("answer")
	switch answer {
	case "approve":
		d.Approve = true
	case "cancel":
	case "variant":
		d.Reason, d.Instruction = agent.DenyVariant, strings.TrimSpace(r.PostFormValue("instruction"))
	case "skip", "keep":
		d.Reason = agent.DenyReason(answer)
	default:
		answer = "invalid"
	}
	var actErr error
	if answer == "invalid" {
		actErr = fmt.Errorf("answer %q", r.PostFormValue("answer"))
	} else {
		_, actErr = u.Runtime.ApproveOnWorker(ctx, me.A.UID, r.PathValue("uuid"), d)
	}
	data, err := u.inboxData(ctx, me)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	if actErr != nil {
		u.logErr(ctx, "inbox decision", actErr)
		data.Error = u.errorText(me, errCode(actErr))
		if answer == "invalid" {
			data.Error = me.T.Get("error.bad_request")
		}
	} else {
		data.Notice = me.T.Get("inbox.decided." + answer)
	}
	p := u.newPage(me, "inbox", "inbox.title")
	p.Inbox = data
	u.render(w, r, "inbox", "inbox-list", p, http.StatusOK)
}
