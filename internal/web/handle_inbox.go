package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"waymark/internal/agent"
)

type inboxData struct {
	Runs      []inboxRun
	Signature string // the waiting runs' digests; the live script compares it
	Error     string
	Notice    string
	Labels    map[string]string
}

type inboxRun struct {
	UUID  string
	Title string
	Card  *cardView
}

func (u *UI) inboxData(ctx context.Context, me *user) (*inboxData, error) {
	runs, err := u.Runtime.Inbox(ctx, me.A.UID)
	if err != nil {
		return nil, err
	}
	d := &inboxData{Labels: labelsFor(me)}
	var sig []string
	for _, st := range runs {
		if st.Pending == nil {
			continue
		}
		pd := st.Pending
		c := &cardView{Digest: pd.TurnDigest, Blocked: pd.ApproveBlocked != "", Action: "/inbox/" + st.UUID, Target: "#inbox"}
		c.Answers = []string{"approve", "cancel"}
		if pd.Answers == "process" {
			c.Answers = []string{"approve", "variant", "skip", "keep"}
		}
		for _, call := range pd.Calls {
			c.Calls = append(c.Calls, u.callView(ctx, me, callParts{ID: call.ID, Tool: call.Tool, Heading: call.Heading,
				Target: call.Target, Preview: call.Preview, PreviewError: call.PreviewError}))
		}
		c.Heading = headingOf(me, c.Calls)
		title := me.T.Get("inbox.from", st.Initiator)
		if who, err := u.userName(ctx, st.Initiator); err == nil {
			title = me.T.Get("inbox.fromName", who)
		}
		d.Runs = append(d.Runs, inboxRun{UUID: st.UUID, Title: title, Card: c})
		sig = append(sig, pd.TurnDigest)
	}
	d.Signature = strings.Join(sig, ",")
	return d, nil
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
// (agent.Runtime.ApproveOnWorker, issue 15 item 1) — then shows the list
// as it is now.
func (u *UI) handleInboxDecide(w http.ResponseWriter, r *http.Request, me *user) {
	ctx := r.Context()
	d := agent.Decision{TurnDigest: r.PostFormValue("turnDigest")}
	answer := r.PostFormValue("answer")
	switch answer {
	case "approve":
		d.Approve = true
	case "cancel":
	case "variant", "skip", "keep":
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
