package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

var runLink = regexp.MustCompile(`href="/admin/runs/([0-9a-f-]{36})"`)

// Screen 5: the run list filters by status, configuration, initiator and
// date; a bad filter is a clear error; a run's page shows its status,
// lineage and process, its events as a timeline, and ending its process
// cancels the waiting run and lets the process go.
func TestAdministratorFindsAStuckTourAndEndsItsProcess(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "Eine Beschreibung."}`))
		erika := login(t, e, "erika", "erika-pass-1234")
		startTour(t, erika, "1", "0", seo)
		admin := loginAdmin(t, e)
		list := admin.get("/admin/runs")
		contains(t, "run list", list, "<td>waiting for approval</td>", "<td>Chat</td><td>erika</td><td>seo</td>")
		// Times as <time datetime> in UTC: the page shows them in the reader's zone (layout.js).
		contains(t, "run list times", list, `<time datetime="`, `Z" data-seconds>`, ` UTC</time>`)
		m := runLink.FindStringSubmatch(list.Body)
		if m == nil {
			t.Fatalf("no run in the list:\n%s", list.Body)
		}
		id := m[1]
		today, yesterday := time.Now().UTC().Format(time.DateOnly), time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
		for query, want := range map[string]bool{
			"initiator=2": true, "initiator=3": false, "configuration=1": true, "configuration=2": false,
			"status=waiting_for_approval": true, "status=completed": false, "from=" + today: true, "to=" + yesterday: false,
		} {
			a := admin.get("/admin/runs?" + query)
			if got := runLink.MatchString(a.Body); got != want {
				t.Errorf("runs?%s lists the run: %v, want %v", query, got, want)
			}
			if !want {
				contains(t, "runs?"+query, a, "No runs match.")
			}
		}
		contains(t, "filter kept", admin.get("/admin/runs?initiator=2&status=waiting_for_approval"),
			`<option value="2" selected>erika</option>`, `<option value="waiting_for_approval" selected>`)
		for _, bad := range []string{"from=yesterday", "initiator=-1", "status=bogus"} {
			a := admin.get("/admin/runs?" + bad)
			if a.Status != http.StatusBadRequest {
				t.Errorf("runs?%s = %d, want 400", bad, a.Status)
			}
			contains(t, "runs?"+bad, a, `<p class="error" role="alert">The filter is not valid:`)
		}

		page := admin.get("/admin/runs/" + id)
		contains(t, "run page", page, "<dd>waiting for approval</dd>", "holds the process seo", "(privacy: metadata)",
			"<strong>lineage</strong>", "<strong>llm</strong>", ">Cancel run</button>", ">End process</button>", " out, 1 step</dd>")
		// In the editor's terms: the page as a link to it, the process by name,
		// the raw lineage only behind "Technical details"; cancel asks first.
		contains(t, "run page in words", page, `<a href="/chat?page=1&amp;language=0">Home (page 1)</a>`, `<a href="/admin/skills/`, ">seo</a>",
			"<summary>Technical details</summary>", `hx-confirm="Cancel this run? Its turn ends now and nothing more of it is written."`)
		if i, j := strings.Index(page.Body, "<pre>"), strings.Index(page.Body, "<summary>Technical details</summary>"); i >= 0 && i < j {
			t.Error("raw JSON comes before the technical details")
		}
		a := admin.post("/admin/runs/"+id+"/end-process", nil)
		if to := a.Header.Get("HX-Redirect"); to != "/admin/runs/"+id+"?done=ended" {
			t.Fatalf("end process = %d, HX-Redirect %q: %s", a.Status, to, a.Body)
		}
		page = admin.get("/admin/runs/" + id + "?done=ended")
		contains(t, "after ending", page, "The process was ended.", "<dd>cancelled", "holds no process", "The run has ended; nothing to do.")
		lacks(t, "after ending", page, ">End process</button>", ">Cancel run</button>")
		if a := admin.get("/admin/runs/00000000-0000-0000-0000-000000000000"); a.Status != http.StatusNotFound {
			t.Errorf("unknown run = %d, want 404", a.Status)
		}
	})
}

// Screen 5: cancelling a waiting run from its page.
func TestAdministratorCancelsAWaitingRun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newAdminEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "Eine Beschreibung."}`))
		erika := login(t, e, "erika", "erika-pass-1234")
		path := startTourIn(t, erika, "1")
		erika.post(path+"/messages", url.Values{"content": {"Beschreibung bitte"}})
		e.App.Chat.Wait()
		admin := loginAdmin(t, e)
		m := runLink.FindStringSubmatch(admin.get("/admin/runs?status=waiting_for_approval").Body)
		if m == nil {
			t.Fatal("no waiting run")
		}
		a := admin.post("/admin/runs/"+m[1]+"/cancel", nil)
		if to := a.Header.Get("HX-Redirect"); to != "/admin/runs/"+m[1]+"?done=cancelled" {
			t.Fatalf("cancel = %d, HX-Redirect %q: %s", a.Status, to, a.Body)
		}
		contains(t, "after cancelling", admin.get("/admin/runs/"+m[1]+"?done=cancelled"), "The run was cancelled.", "<dd>cancelled")
		a = admin.post("/admin/runs/"+m[1]+"/cancel", nil)
		if to := a.Header.Get("HX-Redirect"); to != "/admin/runs/"+m[1]+"?done=unchanged" {
			t.Errorf("second cancel = %d, HX-Redirect %q", a.Status, to)
		}
	})
}
