package web_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// waitFor polls cond (a few seconds at most): a state another goroutine
// brings about.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Stopp beside Senden, shown while a turn runs (app.js keeps it in step
// with the region's status).
const (
	stopShown  = `hx-sync="this:drop">Stopp</button>`
	stopHidden = `hx-sync="this:drop" hidden>Stopp</button>`
)

func convOf(t *testing.T, e *wt.Env, path string) map[string]any {
	t.Helper()
	return e.As(wt.Erika).Must("GET", "/api/conversations/"+strings.TrimPrefix(path, "/chat/"), nil, 200).Map(t)
}

// Stop during a slow model reply: the turn ends at once through the run's
// guarded cancel, the transcript says it was stopped, and the reply the
// model sends afterwards is nowhere — nothing half-written. The next message
// runs a new turn.
func TestStopDuringASlowModelReplyEndsTheTurnAndSaysSo(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		hold, arrived := make(chan struct{}), make(chan struct{})
		e.LLM.Add(llmtest.Reply{Content: "Eine späte Antwort, die niemand sehen darf.", Hold: hold, Arrived: arrived}, say("Weiter geht es."))
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", "0")
		sent := b.post(path+"/messages", url.Values{"content": {"Erzähl mir etwas."}})
		contains(t, "while the turn runs", sent, `data-status="processing"`)
		contains(t, "the page while the turn runs", b.get(path), stopShown)
		<-arrived
		run := convOf(t, e, path)["pendingRunUuid"].(string)
		if run == "" {
			t.Fatal("no pending run while the model answers")
		}
		stopped := b.post(path+"/stop", nil)
		if stopped.Status != http.StatusOK || stopped.Header.Get("X-Waymark-Refused") != "" {
			t.Fatalf("stop = %d (refused %q): %s", stopped.Status, stopped.Header.Get("X-Waymark-Refused"), stopped.Body)
		}
		contains(t, "after Stopp", stopped, `data-status="idle"`, "Angehalten. Die Antwort wurde abgebrochen")
		contains(t, "the page after Stopp", b.get(path), stopHidden)
		close(hold) // the model answers late
		e.App.Chat.Wait()
		waitFor(t, "the run to end", func() bool {
			st, _ := e.As(wt.Erika).Run(run)
			return st.Status == "cancelled"
		})
		view := b.get(path + "/view")
		contains(t, "after the late reply", view, `data-status="idle"`, "Angehalten.")
		lacks(t, "after the late reply", view, "späte Antwort")
		c := convOf(t, e, path)
		if c["status"] != "idle" || c["pendingRunUuid"] != nil && c["pendingRunUuid"] != "" {
			t.Errorf("conversation after the late reply = %v %v", c["status"], c["pendingRunUuid"])
		}
		// Stop again: nothing runs, it says so and changes nothing.
		again := b.post(path+"/stop", nil)
		contains(t, "stop with nothing running", again, "Es läuft gerade nichts")
		if again.Header.Get("X-Waymark-Refused") == "" {
			t.Error("a refused stop is not marked refused")
		}
		e.As(wt.Erika).Must("POST", "/api/conversations/"+strings.TrimPrefix(path, "/chat/")+"/stop", nil, 409)
		// The chat goes on.
		b.post(path+"/messages", url.Values{"content": {"Und jetzt?"}})
		e.App.Chat.Wait()
		contains(t, "next turn", b.get(path+"/view"), "Weiter geht es.", `data-status="idle"`)
	})
}

// A running turn whose run is cancelled and settled before Stop records it
// (the turn's own settling wins the race after Stop's cancel, or the run is
// cancelled through the runs API) reads as stopped, never "Zurückgezogen.":
// a running turn is cancelled only by a stop.
func TestARunningTurnCancelledBeforeStopRecordsItReadsAsStopped(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		hold, arrived := make(chan struct{}), make(chan struct{})
		e.LLM.Add(llmtest.Reply{Content: "Eine späte Antwort, die niemand sehen darf.", Hold: hold, Arrived: arrived})
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", "0")
		b.post(path+"/messages", url.Values{"content": {"Erzähl mir etwas."}})
		<-arrived
		run := convOf(t, e, path)["pendingRunUuid"].(string)
		if _, r := e.As(wt.Erika).CancelRun(run); r.Status != http.StatusOK {
			t.Fatalf("cancel the run = %d %s", r.Status, r.Body)
		}
		close(hold)
		e.App.Chat.Wait()
		waitFor(t, "the turn to settle", func() bool { return convOf(t, e, path)["status"] == "idle" })
		view := b.get(path + "/view")
		contains(t, "a cancelled running turn", view, "Angehalten. Die Antwort wurde abgebrochen")
		lacks(t, "a cancelled running turn", view, "Zurückgezogen.", "späte Antwort")
	})
}

// Stop racing a finishing turn, the turn first: the run completed between
// Stop's read and its cancel, so the guarded cancel loses, Stop is refused
// (409 not_running) and the answer stands, with no stopped line.
func TestStopLosingToAFinishingTurnKeepsTheAnswer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		hold, arrived := make(chan struct{}), make(chan struct{})
		var e *wt.Env
		var run string
		e = wt.New(t, db, site, &wt.Options{BeforeClaim: func(op string) {
			if op != "stop" {
				return
			}
			close(hold) // the model answers now, before Stop cancels
			waitFor(t, "the run to complete", func() bool {
				st, _ := e.As(wt.Erika).Run(run)
				return st.Status == "completed"
			})
		}})
		e.LLM.Add(llmtest.Reply{Content: "Die Antwort kam zuerst.", Hold: hold, Arrived: arrived})
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", "0")
		b.post(path+"/messages", url.Values{"content": {"Erzähl mir etwas."}})
		<-arrived
		run = convOf(t, e, path)["pendingRunUuid"].(string)
		r := e.As(wt.Erika).Do("POST", "/api/conversations/"+strings.TrimPrefix(path, "/chat/")+"/stop", nil)
		if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "not_running") {
			t.Fatalf("stop after the run completed = %d %s, want 409 not_running", r.Status, r.Body)
		}
		e.App.Chat.Wait()
		view := b.get(path + "/view")
		contains(t, "the answer stands", view, "Die Antwort kam zuerst.", `data-status="idle"`)
		lacks(t, "the answer stands", view, "Angehalten.")
		if st := e.As(wt.Erika).MustRun(run); st.Status != "completed" {
			t.Errorf("run = %s, want completed", st.Status)
		}
	})
}

// An action whose session has ended is not done and not sent to a bare login
// page: it answers 401 (the page keeps the typed text and says so); the
// login it links to brings the editor back to her conversation.
func TestEndedSessionActionIsRefusedAndLoginReturnsToTheConversation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", "0")
		other := newBrowser(t, e)
		other.c.Jar = b.c.Jar
		other.csrf = b.csrf
		b.post("/logout", nil) // the session ends (another tab)
		a := other.post(path+"/messages", url.Values{"content": {"Noch da?"}})
		if a.Status != http.StatusUnauthorized || a.Header.Get("X-Waymark-Session-Ended") == "" || a.Header.Get("HX-Redirect") != "" {
			t.Fatalf("message after the session ended = %d %v: %s", a.Status, a.Header, a.Body)
		}
		if msgs := convOf(t, e, path)["messages"].([]any); len(msgs) != 0 {
			t.Errorf("the refused message was recorded: %v", msgs)
		}
		// Opening the conversation without a session leads to a login that returns there.
		g := other.get(path)
		if loc := g.Header.Get("Location"); g.Status != http.StatusSeeOther || loc != "/login?next="+url.QueryEscape(path) {
			t.Fatalf("GET %s without a session = %d → %q", path, g.Status, loc)
		}
		page := other.get("/login?next=" + url.QueryEscape(path))
		contains(t, "login page", page, `name="next" value="`+path+`"`)
		in := other.post("/login", url.Values{"username": {"erika"}, "password": {"erika-pass-1234"}, "next": {path}})
		if to := in.Header.Get("HX-Redirect"); to != path {
			t.Fatalf("login with next = %q, want %q", to, path)
		}
		// Another host is never a destination.
		for _, bad := range []string{"//evil.example/chat", "https://evil.example/", "/\\evil.example", "chat/1"} {
			x := newBrowser(t, e)
			if to := x.post("/login", url.Values{"username": {"erika"}, "password": {"erika-pass-1234"}, "next": {bad}}).Header.Get("HX-Redirect"); to != "/" {
				t.Errorf("login with next %q sends to %q, want / (home)", bad, to)
			}
		}
	})
}

// A message refused while a turn runs is marked refused: the page keeps it in
// the box (the live script empties the box only for a message taken).
func TestRefusedMessageIsMarkedSoTheBoxKeepsIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		hold, arrived := make(chan struct{}), make(chan struct{})
		e.LLM.Add(llmtest.Reply{Content: "Fertig.", Hold: hold, Arrived: arrived})
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", "0")
		first := b.post(path+"/messages", url.Values{"content": {"Erste Frage"}})
		if first.Header.Get("X-Waymark-Refused") != "" {
			t.Fatalf("the first message was refused: %s", first.Body)
		}
		<-arrived
		second := b.post(path+"/messages", url.Values{"content": {"Zweite Frage"}})
		if second.Header.Get("X-Waymark-Refused") == "" {
			t.Errorf("the second message is not marked refused: %v", second.Header)
		}
		close(hold)
		e.App.Chat.Wait()
		lacks(t, "refused message", b.get(path+"/view"), "Zweite Frage")
	})
}

// The model's reply streams into the transcript as it arrives: while the
// model is still writing, the conversation (API and screen) shows the part
// written so far; once it is done, the answer is the transcript's message.
func TestModelReplyStreamsIntoTheTranscript(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, site, &wt.Options{ModelStream: true})
		midway := make(chan struct{})
		reply := "Erstens ist die Seite kurz, zweitens fehlt eine Beschreibung, drittens passt der Titel."
		e.LLM.Add(llmtest.Reply{Content: reply, HoldMidway: midway})
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", "0")
		b.post(path+"/messages", url.Values{"content": {"Was fällt dir auf?"}})
		var draft string
		waitFor(t, "a part of the reply to stream in", func() bool {
			d, _ := convOf(t, e, path)["draft"].(string)
			draft = d
			return d != ""
		})
		if !strings.HasPrefix(reply, draft) || draft == reply {
			t.Fatalf("draft while the model writes = %q, want a beginning of %q", draft, reply)
		}
		view := b.get(path + "/view")
		contains(t, "while streaming", view, `class="message assistant streaming"`, draft)
		contains(t, "the page while streaming", b.get(path), stopShown)
		close(midway)
		e.App.Chat.Wait()
		c := convOf(t, e, path)
		if c["draft"] != nil {
			t.Errorf("draft after the turn = %v, want none", c["draft"])
		}
		view = b.get(path + "/view")
		contains(t, "after the turn", view, reply)
		lacks(t, "after the turn", view, "streaming")
	})
}

// Stop while the reply streams in keeps the part that had arrived: the
// transcript shows it marked as stopped (the API holds it with the notice),
// and the model's next turn does not read it.
func TestStopKeepsThePartOfTheStreamedReplyMarkedAsStopped(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, site, &wt.Options{ModelStream: true})
		midway := make(chan struct{})
		reply := "Erstens ist die Seite kurz, zweitens fehlt eine Beschreibung, drittens passt der Titel."
		e.LLM.Add(llmtest.Reply{Content: reply, HoldMidway: midway}, say("Weiter geht es."))
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", "0")
		b.post(path+"/messages", url.Values{"content": {"Was fällt dir auf?"}})
		var draft string
		waitFor(t, "a part of the reply to stream in", func() bool {
			draft, _ = convOf(t, e, path)["draft"].(string)
			return strings.Contains(draft, "zweitens")
		})
		stopped := b.post(path+"/stop", nil)
		contains(t, "after Stopp", stopped, `data-status="idle"`, draft, "Angehalten. Die Antwort wurde abgebrochen")
		lacks(t, "after Stopp", stopped, "streaming", "drittens")
		close(midway)
		e.App.Chat.Wait()
		msgs := convOf(t, e, path)["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		if last["content"] != draft || last["notice"] != "stopped" {
			t.Fatalf("the stopped reply = %v, want content %q with notice stopped", last, draft)
		}
		b.post(path+"/messages", url.Values{"content": {"Und jetzt?"}})
		e.App.Chat.Wait()
		contains(t, "next turn", b.get(path+"/view"), "Weiter geht es.", draft)
		reqs := e.LLM.Requests()
		for _, m := range reqs[len(reqs)-1].Messages {
			if strings.Contains(m.Content, "zweitens fehlt") {
				t.Errorf("the next turn's model request holds the stopped part: %s %q", m.Role, m.Content)
			}
		}
	})
}

// Stop of a turn queued whose run has not begun (no worker took it yet):
// the conversation goes idle with the stopped line, and a worker that takes
// the job later finds its claim gone and starts no run.
func TestStopOfAQueuedTurnTakesItBackBeforeItsRunBegins(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		e := wt.New(t, db, site, &wt.Options{APIOnly: true}) // no workers: the turn waits in the queue
		b := login(t, e, "erika", "erika-pass-1234")
		a := b.post("/chat", url.Values{"page": {"1"}, "language": {"0"}})
		path := a.Header.Get("HX-Redirect")
		if !convPath.MatchString(path) {
			t.Fatalf("start = %d %q", a.Status, path)
		}
		b.post(path+"/messages", url.Values{"content": {"Hallo?"}})
		stopped := b.post(path+"/stop", nil)
		contains(t, "after Stopp", stopped, `data-status="idle"`, "Angehalten.")
		// A worker comes (another process on the same database): it starts no run.
		w := wt.New(t, another(), "", &wt.Options{})
		w.App.Chat.Wait()
		var n int
		if err := db.QueryRow(t.Context(), "SELECT COUNT(*) FROM runs").Scan(&n); err != nil || n != 0 {
			t.Errorf("runs after the stopped turn = %d (%v), want 0", n, err)
		}
		if c := convOf(t, e, path); c["status"] != "idle" {
			t.Errorf("conversation = %v, want idle", c["status"])
		}
	})
}

// Stop of a turn whose model call runs in another process (a worker beside
// serve) ends that call at once: the cancel's signal reaches the worker on
// PostgreSQL, which renews at once, loses and cuts the call — not at its
// next lease renewal, half an hour away here. SQLite's signals stay in
// their process: there the call ends at the worker's next renewal (a second
// here).
func TestStopEndsAModelCallRunningInAnotherProcess(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		e := wt.New(t, db, site, &wt.Options{APIOnly: true}) // serves; its turns run on the worker below
		hold, arrived, gone := make(chan struct{}), make(chan struct{}), make(chan struct{})
		defer close(hold)
		e.LLM.Add(llmtest.Reply{Content: "Zu spät.", Hold: hold, Arrived: arrived, Gone: gone})
		opts := &wt.Options{Lease: time.Hour, Heartbeat: 30 * time.Minute}
		if db.Dialect() == store.SQLite {
			opts.Lease, opts.Heartbeat = 10*time.Second, time.Second
		}
		worker := another()
		wt.New(t, worker, "", opts)
		if db.Dialect() == store.Postgres {
			listening(t, db, worker)
		}
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", "0")
		b.post(path+"/messages", url.Values{"content": {"Erzähl mir etwas."}})
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
			t.Fatal("the worker did not call the model within 10 s")
		}
		begin := time.Now()
		contains(t, "after Stopp", b.post(path+"/stop", nil), `data-status="idle"`, "Angehalten.")
		select {
		case <-gone:
			t.Logf("%s: the worker's model call ended %v after Stop", db.Dialect(), time.Since(begin).Round(time.Millisecond))
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the worker's model call still runs 10 s after Stop", db.Dialect())
		}
	})
}

// listening waits until a signal sent through from reaches to (to's
// listener is up: it starts with its process's first watch).
func listening(t *testing.T, from, to *store.DB) {
	t.Helper()
	ch, done := to.Watch("test-listening")
	defer done()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if err := store.SignalAfter(t.Context(), from, "test-listening"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("no signal reached the other process within 10 s")
}

// A form post with text the database cannot store — a NUL byte, bytes that
// are not UTF-8 — is refused 400 with a sentence before its handler runs,
// as the JSON API refuses such a body; nothing is stored and the box keeps
// the text (the answer is marked refused). The login form, whose page has
// no live script, comes back with the sentence in place.
func TestAFormPostWithTextTheDatabaseCannotStoreIsRefusedAndChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", "0")
		for _, bad := range []string{"Was\x00fehlt?", "Was fehlt\xff?"} {
			r := b.post(path+"/messages", url.Values{"content": {bad}})
			if r.Status != http.StatusBadRequest || r.Header.Get("X-Waymark-Refused") == "" || !strings.Contains(r.Body, "nicht gespeichert werden") {
				t.Errorf("message %q = %d %q %s, want 400 refused with the sentence", bad, r.Status, r.Header.Get("X-Waymark-Refused"), r.Body)
			}
		}
		var multi bytes.Buffer
		mw := multipart.NewWriter(&multi)
		_ = mw.WriteField("content", "Was\x00fehlt?")
		_ = mw.Close()
		if r := b.send(http.MethodPost, path+"/messages", &multi, mw.FormDataContentType(), ""); r.Status != http.StatusBadRequest ||
			!strings.Contains(r.Body, "nicht gespeichert werden") {
			t.Errorf("a multipart message with a NUL byte = %d %s, want 400 with the sentence", r.Status, r.Body)
		}
		e.App.Chat.Wait()
		if n := len(convOf(t, e, path)["messages"].([]any)); n != 0 {
			t.Errorf("%d messages stored after refused posts, want none", n)
		}
		// The login form comes back with the sentence in place (the login
		// page has no script that would show a refusal): no session.
		r := newBrowser(t, e).post("/login", url.Values{"username": {"erika\x00"}, "password": {"erika-pass-1234"}})
		if r.Status != http.StatusOK || r.Header.Get("HX-Redirect") != "" || r.Header.Get("Set-Cookie") != "" ||
			!strings.Contains(r.Body, "cannot be stored") || !strings.Contains(r.Body, `name="username"`) {
			t.Errorf("a login form with a NUL byte = %d %q %q %s, want the form with the sentence, no session",
				r.Status, r.Header.Get("HX-Redirect"), r.Header.Get("Set-Cookie"), r.Body)
		}
	})
}
