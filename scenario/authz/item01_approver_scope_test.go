package authz_test

import (
	"net/http"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// An approver sees and decides a waiting run only when they may use its
// configuration and may read every pending call's target record as they are
// now; otherwise the run answers exactly like an unknown one.
func TestApproveGrantIsScopedToConfigurationAndTargetRecords(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		st := waitingRun(t, e, e.As(erika), 2, "1")
		id, d := st.UUID, digest(t, st)
		approval := map[string]any{"approve": true, "turnDigest": d}

		for _, c := range []struct{ name, token string }{
			{"vera (approve grant, other mounts)", vera},
			{"lena (approve grant, erika's mounts, not the record's language)", lena},
		} {
			u := e.As(c.token)
			sameNotFound(t, c.name+": GET run", u.Do("GET", "/api/runs/"+id, nil), u.Do("GET", "/api/runs/"+unknownRun, nil))
			sameNotFound(t, c.name+": approval", u.Do("POST", "/api/runs/"+id+"/approval", approval),
				u.Do("POST", "/api/runs/"+unknownRun+"/approval", approval))
			if runs := wt.Decode[wt.Inbox](t, u.Must("GET", "/api/inbox", nil, http.StatusOK)).Runs; len(runs) != 0 {
				t.Errorf("%s: inbox lists a run outside their scope: %+v", c.name, runs)
			}
		}

		// As they are now: vera joins the editors' group and may decide.
		exec(t, db, "UPDATE be_users SET group_uids = '[1, 2]' WHERE uid = 6")
		if got := wt.Decode[wt.RunStatus](t, e.As(vera).Must("GET", "/api/runs/"+id, nil, http.StatusOK)); got.Status != "waiting_for_approval" {
			t.Fatalf("vera in the editors' group: %+v", got)
		}
		exec(t, db, "UPDATE be_users SET group_uids = '[2]' WHERE uid = 6")
		if r := e.As(vera).Do("GET", "/api/runs/"+id, nil); r.Status != http.StatusNotFound {
			t.Fatalf("vera back in her own group: %d %s", r.Status, r.Body)
		}

		// Paula may read page 1 in every language and use the configuration.
		p := e.As(paula)
		if runs := wt.Decode[wt.Inbox](t, p.Must("GET", "/api/inbox", nil, http.StatusOK)).Runs; len(runs) != 1 {
			t.Fatalf("paula's inbox = %+v, want erika's run", runs)
		}
		done(e)
		got := wt.Decode[wt.RunStatus](t, p.Must("POST", "/api/runs/"+id+"/approval", approval, http.StatusOK))
		if got.Status != "completed" || got.Answer != "" { // answer is omitempty: absent and empty are one
			t.Fatalf("paula's release (status, no transcript text): %+v", got)
		}
	})
}

// A waiting run on a configuration the approver may not use answers like an
// unknown one, and the inbox does not list it.
func TestApproverWhoMayNotUseTheConfigurationSeesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		st := waitingRun(t, e, e.As(erika), 3, "1") // campaign: erika's group 4 only
		id := st.UUID
		p := e.As(paula)
		sameNotFound(t, "paula: GET run on campaign", p.Do("GET", "/api/runs/"+id, nil), p.Do("GET", "/api/runs/"+unknownRun, nil))
		body := map[string]any{"approve": true, "turnDigest": digest(t, st)}
		sameNotFound(t, "paula: approval on campaign", p.Do("POST", "/api/runs/"+id+"/approval", body),
			p.Do("POST", "/api/runs/"+unknownRun+"/approval", body))
		if runs := wt.Decode[wt.Inbox](t, p.Must("GET", "/api/inbox", nil, http.StatusOK)).Runs; len(runs) != 0 {
			t.Errorf("paula's inbox lists a campaign run: %+v", runs)
		}
		if got := wt.Decode[wt.RunStatus](t, e.As(erika).Must("GET", "/api/runs/"+id, nil, http.StatusOK)); got.Status != "waiting_for_approval" {
			t.Fatalf("the refusals changed the run: %+v", got)
		}
	})
}

// What an approver sees is the run's status and its card: the transcript
// events — at privacy full the initiator's prompt text — stay with the
// initiator and administrators.
func TestApproverSeesStatusAndCardNotTheTranscript(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		for _, cfg := range []int{1, 2} {
			st := waitingRun(t, e, e.As(erika), cfg, "1")
			id := st.UUID
			p := e.As(paula)
			got := p.Must("GET", "/api/runs/"+id, nil, http.StatusOK)
			if strings.Contains(string(got.Body), "Confidential") {
				t.Errorf("configuration %d: the approver's status shows the prompt: %s", cfg, got.Body)
			}
			pending := wt.Decode[wt.RunStatus](t, got).Pending
			if pending == nil {
				t.Fatalf("configuration %d: the approver's status has no card: %s", cfg, got.Body)
			}
			if calls := pending.Calls; len(calls) != 1 || calls[0].Tool != "update_page_metadata" {
				t.Errorf("configuration %d: the approver's card = %+v", cfg, calls)
			}
			sameNotFound(t, "paula: events", p.Do("GET", "/api/runs/"+id+"/events?after=0", nil),
				p.Do("GET", "/api/runs/"+unknownRun+"/events?after=0", nil))
			sse := sseGet(t, e, paula, "/api/runs/"+id+"/events")
			sameNotFound(t, "paula: event stream", sse, sseGet(t, e, paula, "/api/runs/"+unknownRun+"/events"))
			for _, tok := range []string{erika, admin} {
				evs := e.As(tok).Must("GET", "/api/runs/"+id+"/events?after=0", nil, http.StatusOK)
				if !strings.Contains(string(evs.Body), "Confidential") {
					t.Errorf("configuration %d: %s does not see the transcript: %s", cfg, tok, evs.Body)
				}
			}
		}
	})
}

// sseGet asks for an event stream; a refusal comes back as a JSON error.
func sseGet(t *testing.T, e *wt.Env, token, path string) wt.Response {
	t.Helper()
	return e.As(token).DoHeaders("GET", path, nil, map[string]string{"Accept": "text/event-stream"})
}
