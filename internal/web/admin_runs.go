package web

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/llmconfig"
	"waymark/internal/process"
	"waymark/internal/run"
)

// The runs screen. The list filters by status, configuration,
// initiator and creation date (agent.ParseRunFilter and agent.Runtime.List,
// as GET /api/admin/runs); a run's page shows its status, its events as a
// timeline (what the configuration's privacy level kept), its lineage and
// process state, and offers cancel (agent.Runtime.Cancel) and end process
// (process.Ender.EndProcess).

// runEventLimit bounds the timeline of a run's page.
const runEventLimit = 1000

type runListData struct {
	Q        url.Values
	Runs     []runRow
	Next     string // the query of the next page, "" on the last
	Error    string
	Statuses []run.Status
	Configs  []llmconfig.Configuration
	Users    []access.Account
}

// Is reports whether query parameter name has value v (the filter's selects).
func (d *runListData) Is(name string, v any) bool { return d.Q.Get(name) == fmt.Sprint(v) }

// Param is the value of query parameter name (the filter's date fields).
func (d *runListData) Param(name string) string { return d.Q.Get(name) }

type runRow struct {
	agent.Status
	ConfigName    string
	InitiatorName string
}

type runData struct {
	runRow
	Events  []agent.Event
	Lineage *process.Lineage
	// SubjectTitle is the subject page's title as the administrator reads it
	// ("" when the subject is not a page).
	SubjectTitle string
	Privacy      llmconfig.Privacy
	Notice       string
	Error        string
}

// Terminal reports whether the run has ended (no cancel offered).
func (d *runData) Terminal() bool { return d.Status.Status.Terminal() }

// Holds reports whether the run holds a process (end process offered).
func (d *runData) Holds() bool { return d.HoldsProcess != nil && *d.HoldsProcess }

var runStatuses = []run.Status{run.StatusQueued, run.StatusRunning, run.StatusWaitingForApproval, run.StatusWaitingForInput,
	run.StatusCompleted, run.StatusFailed, run.StatusCancelled}

// names reads the names of configurations and users for the runs screens.
func (u *UI) names(ctx context.Context) ([]llmconfig.Configuration, []access.Account, error) {
	cfgs, err := u.Configs.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	users, err := access.ListAccounts(ctx, u.Directory, u.DB)
	return cfgs, users, err
}

func rowOf(st agent.Status, cfgs []llmconfig.Configuration, users []access.Account) runRow {
	row := runRow{Status: st, ConfigName: fmt.Sprint(st.Configuration), InitiatorName: fmt.Sprint(st.Initiator)}
	for _, c := range cfgs {
		if c.UID == st.Configuration {
			row.ConfigName = c.Name
		}
	}
	for _, a := range users {
		if a.UID == st.Initiator {
			row.InitiatorName = a.Username
		}
	}
	return row
}

func (u *UI) handleRunList(w http.ResponseWriter, r *http.Request, me *user) {
	ctx := r.Context()
	cfgs, users, err := u.names(ctx)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	q := r.URL.Query()
	d := &runListData{Q: q, Statuses: runStatuses, Configs: cfgs, Users: users}
	status := http.StatusOK
	f, err := agent.ParseRunFilter(q)
	var page agent.RunPage
	if err == nil {
		page, err = u.Runtime.List(ctx, me.A.UID, f)
	}
	switch {
	case errors.Is(err, agent.ErrInvalid):
		d.Error, status = me.T.Get("admin.runs.badFilter", err.Error()), http.StatusBadRequest
	case err != nil:
		u.fail(w, r, me, err)
		return
	}
	for _, st := range page.Runs {
		d.Runs = append(d.Runs, rowOf(st, cfgs, users))
	}
	if page.Next != "" {
		next := url.Values{}
		for k, v := range q {
			next[k] = v
		}
		next.Set("after", page.Next)
		d.Next = next.Encode()
	}
	p := u.newPage(me, "admin", "admin.runs.title")
	p.Data = d
	u.render(w, r, "admin_runs", "layout", p, status)
}

func (u *UI) runData(ctx context.Context, me *user, id string) (*runData, error) {
	st, err := u.Runtime.Status(ctx, me.A.UID, id)
	if err != nil {
		return nil, err
	}
	cfgs, users, err := u.names(ctx)
	if err != nil {
		return nil, err
	}
	d := &runData{runRow: rowOf(st, cfgs, users)}
	for _, c := range cfgs {
		if c.UID == st.Configuration {
			d.Privacy = c.Privacy
		}
	}
	if d.Events, err = u.Runtime.Events(ctx, me.A.UID, id, 0, runEventLimit); err != nil {
		return nil, err
	}
	for _, e := range d.Events {
		if e.Kind != run.EventLineage {
			continue
		}
		var l process.Lineage
		if json.Unmarshal(e.Payload, &l) == nil {
			d.Lineage = &l // the latest lineage event counts
		}
	}
	if l := d.Lineage; l != nil && l.Subject != nil && l.Subject.Table == "pages" {
		d.SubjectTitle = cmp.Or(u.Site.Title(ctx, me.A, l.Subject.UID, l.Subject.Language), me.T.Get("chat.pageNumber", l.Subject.UID))
	}
	return d, nil
}

func (u *UI) handleRunPage(w http.ResponseWriter, r *http.Request, me *user) {
	d, err := u.runData(r.Context(), me, r.PathValue("uuid"))
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	switch r.URL.Query().Get("done") {
	case "cancelled":
		d.Notice = me.T.Get("admin.run.cancelled")
	case "ended":
		d.Notice = me.T.Get("admin.run.ended")
	case "unchanged":
		d.Notice = me.T.Get("admin.run.unchanged")
	}
	p := u.newPage(me, "admin", "admin.run.title")
	p.Data = d
	u.render(w, r, "admin_run", "layout", p, http.StatusOK)
}

// handleRunCancel cancels the run from any non-terminal status.
func (u *UI) handleRunCancel(w http.ResponseWriter, r *http.Request, me *user) {
	id := r.PathValue("uuid")
	won, err := u.Runtime.Cancel(r.Context(), me.A.UID, id)
	u.afterRunAction(w, r, me, id, won, "cancelled", err)
}

// handleRunEndProcess ends the process the run holds (a stuck tour).
func (u *UI) handleRunEndProcess(w http.ResponseWriter, r *http.Request, me *user) {
	id := r.PathValue("uuid")
	ended, _, err := u.Ender.EndProcess(r.Context(), me.A.UID, id)
	if errors.Is(err, process.ErrNotFound) {
		u.notFound(w, r, me)
		return
	}
	u.afterRunAction(w, r, me, id, ended, "ended", err)
}

func (u *UI) afterRunAction(w http.ResponseWriter, r *http.Request, me *user, id string, won bool, done string, actErr error) {
	if actErr == nil {
		if !won {
			done = "unchanged"
		}
		redirect(w, r, "/admin/runs/"+url.PathEscape(id)+"?done="+done)
		return
	}
	d, err := u.runData(r.Context(), me, id)
	if err != nil {
		u.fail(w, r, me, err)
		return
	}
	u.logErr(r.Context(), "run action", actErr)
	d.Error = u.errorText(me, errCode(actErr))
	if errors.Is(actErr, process.ErrUnreadable) {
		d.Error = me.T.Get("admin.run.lineageUnreadable")
	}
	p := u.newPage(me, "admin", "admin.run.title")
	p.Data = d
	u.render(w, r, "admin_run", "layout", p, http.StatusOK)
}
