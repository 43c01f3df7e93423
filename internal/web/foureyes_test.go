package web_test

import (
	"net/url"
	"regexp"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Screens 4 and 7: on a four-eyes configuration chosen in the picker the
// editor's card says a second person must release it and its approve button
// says so; paula releases it from her inbox and the editor's conversation
// then shows the release and the applied text in the preview.
func TestFourEyesCardReleasedFromTheInboxShowsInTheEditorsChat(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "Zwei Personen haben diese Beschreibung geprüft."}`), say("Danke."))
		erika := login(t, e, "erika", "erika-pass-1234")
		contains(t, "picker", erika.get("/chat"), `<label for="picker-configuration">Assistent</label>`,
			"Four eyes (eine zweite Person gibt Änderungen frei)")
		a := erika.post("/chat", url.Values{"page": {"1"}, "language": {"0"}, "configuration": {"2"}, "skill": {seo}})
		// It says why no process runs there and what to choose instead.
		contains(t, "a process on four eyes", a, `role="alert"`, "Bei diesem Assistenten gibt eine zweite Person jede Änderung frei, und dort laufen keine Prozesse.",
			"Wähle „Kein Prozess (freier Chat)“ oder einen anderen Assistenten.")
		path := startTourIn(t, erika, "2")
		erika.post(path+"/messages", url.Values{"content": {"Beschreibung bitte"}})
		e.App.Chat.Wait()
		page := erika.get(path)
		contains(t, "four-eyes card", page, "Eine zweite Person muss diese Änderung freigeben.",
			`<button type="button" disabled>Freigabe durch zweite Person</button>`, ">Ablehnen</button>",
			"Wartet auf die Freigabe einer zweiten Person")
		paula := login(t, e, "paula", "paula-pass-1234")
		inbox := paula.get("/inbox")
		contains(t, "paula's inbox", inbox, "Requested by erika", ">Release</button>")
		uuid := runOf(t, inbox)
		contains(t, "release", paula.post("/inbox/"+uuid, url.Values{"turnDigest": {turnDigest(t, inbox)}, "answer": {"approve"}}), "Released.")
		e.App.Chat.Wait()
		view := erika.get(path + "/view")
		contains(t, "editor after the release (says by whom)", view, "Von paula freigegeben.", "<dd>Zwei Personen haben diese Beschreibung geprüft.</dd>")
		lacks(t, "editor after the release", view, "Freigabe durch zweite Person")
	})
}

func startTourIn(t *testing.T, b *browser, configuration string) string {
	t.Helper()
	a := b.post("/chat", url.Values{"page": {"1"}, "language": {"0"}, "configuration": {configuration}})
	to := a.Header.Get("HX-Redirect")
	if !convPath.MatchString(to) {
		t.Fatalf("POST /chat in configuration %s = %d, HX-Redirect %q: %s", configuration, a.Status, to, a.Body)
	}
	return to
}

var inboxAction = regexp.MustCompile(`hx-post="/inbox/([0-9a-f-]+)"`)

func runOf(t *testing.T, a answer) string {
	t.Helper()
	m := inboxAction.FindStringSubmatch(a.Body)
	if m == nil {
		t.Fatalf("no waiting run in:\n%s", a.Body)
	}
	return m[1]
}
