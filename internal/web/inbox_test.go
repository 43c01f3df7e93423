package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// Screen 7: a four-eyes card waits in the second approver's inbox with the
// same card view, in the approver's language; the initiator cannot release
// it; Freigeben releases it.
func TestInboxReleasesAFourEyesCard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "Vier Augen sehen mehr."}`), say("Erledigt."))
		run := e.As(wt.Erika).Must("POST", "/api/runs", map[string]any{"configuration": 2,
			"messages": []map[string]string{{"role": "user", "content": "Beschreibung bitte"}}}, http.StatusCreated).Map(t)
		if run["status"] != "waiting_for_approval" {
			t.Fatalf("run = %v", run)
		}
		paula := login(t, e, "paula", "paula-pass-1234")
		if a := paula.get("/chat"); !contains2(a.Body, `href="/inbox"`) {
			t.Errorf("an approver's navigation has no inbox link")
		}
		inbox := paula.get("/inbox")
		contains(t, "inbox (en)", inbox, "Waiting for your release", "Requested by erika", "Affected", "Current", "Proposal",
			"<ins>Vier Augen sehen mehr.</ins>", ">Release</button>", ">Decline</button>", `hx-post="/inbox/`+run["uuid"].(string)+`"`)
		// The card reads in paula's language, not in erika's (who started the run in German).
		contains(t, "inbox labels (en)", inbox, "Page: Home", "Description")
		lacks(t, "inbox labels (en)", inbox, "Seite: Home", "Beschreibung")
		erika := login(t, e, "erika", "erika-pass-1234")
		if a := erika.get("/inbox"); contains2(a.Body, "Vier Augen") {
			t.Errorf("the initiator's inbox shows her own four-eyes run")
		}
		a := paula.post("/inbox/"+run["uuid"].(string), url.Values{"turnDigest": {turnDigest(t, inbox)}, "answer": {"approve"}})
		contains(t, "after release", a, "Released.", "Nothing is waiting for you.")
		st := e.As(wt.Erika).Must("GET", "/api/runs/"+run["uuid"].(string), nil, http.StatusOK).Map(t)
		if st["status"] == "waiting_for_approval" {
			t.Errorf("the run still waits after the release: %v", st)
		}
	})
}

// Bad input to the inbox gets a clear error and changes nothing.
func TestInboxRefusesAnUnknownAnswer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "x"}`))
		run := e.As(wt.Erika).Must("POST", "/api/runs", map[string]any{"configuration": 2,
			"messages": []map[string]string{{"role": "user", "content": "x"}}}, http.StatusCreated).Map(t)
		paula := login(t, e, "paula", "paula-pass-1234")
		inbox := paula.get("/inbox")
		a := paula.post("/inbox/"+run["uuid"].(string), url.Values{"turnDigest": {turnDigest(t, inbox)}, "answer": {"delete-all"}})
		contains(t, "unknown answer", a, `role="alert"`, "The request was not understood.", ">Release</button>")
	})
}

func contains2(body, s string) bool { return len(body) > 0 && stringsContains(body, s) }

// A waiting card of a chat names the conversation's page (read through the
// chat service), and the inbox's headings run in order: the page's h1, an h2
// per waiting request, the card's h3 — no level skipped.
func TestInboxNamesTheChatsPageAndItsHeadingsRunInOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "Zwei Personen haben diese Beschreibung geprüft."}`))
		erika := login(t, e, "erika", "erika-pass-1234")
		path := startTourIn(t, erika, "2")
		erika.post(path+"/messages", url.Values{"content": {"Beschreibung bitte"}})
		e.App.Chat.Wait()
		inbox := login(t, e, "paula", "paula-pass-1234").get("/inbox")
		contains(t, "paula's inbox", inbox, `<a class="page" href="/chat?page=1&amp;language=0">Home</a>`, `<h2 `)
		main := inbox.Body[strings.Index(inbox.Body, "<main"):]
		prev := 0
		for _, m := range regexp.MustCompile(`<h([1-6])[ >]`).FindAllStringSubmatch(main, -1) {
			level := int(m[1][0] - '0')
			if level > prev+1 {
				t.Errorf("heading h%d follows h%d: a level is skipped", level, prev)
			}
			prev = level
		}
	})
}
