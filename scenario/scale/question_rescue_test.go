package scale_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"waymark/internal/clock"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// questionSite is site with choose among the process's tools.
var questionSite = strings.Replace(site, "set_progress]", "set_progress, choose]", 1)

func ask() llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "q1", Name: "choose",
		Arguments: `{"question": "Welche Tonalität?", "options": ["formell", "locker"], "freeText": false}`}}}
}

// said counts the messages of conv whose role is role and content is content.
func said(conv wt.Conversation, role, content string) int {
	n := 0
	for _, m := range conv.Messages {
		if m.Role == role && m.Content == content {
			n++
		}
	}
	return n
}

// lostAnswer is a question answered with 202 whose job a worker took and
// then stopped with before the answer reached the run, handed back to the
// workers by the reaper after one lease.
type lostAnswer struct {
	db      *store.DB
	another func() *store.DB
	clk     *clock.Fake
	api     *wt.Env
	erika   *wt.Client
	id      int64
	payload json.RawMessage // the answer's job, as the stopped worker took it
}

// loseAnAnswer asks a question, answers it while no worker runs, lets a
// worker take the job and "die", and checks that within the lease nothing
// changes and after it the reaper hands the job back — the question not
// offered again.
func loseAnAnswer(t *testing.T, db *store.DB, another func() *store.DB) lostAnswer {
	t.Helper()
	ctx := t.Context()
	clk := clock.NewFake(time.Now())
	api := wt.New(t, db, questionSite, &wt.Options{APIOnly: true, Clock: clk})
	first := wt.New(t, another(), "", &wt.Options{ChatWorkers: 1, Clock: clk})
	api.LLM.Add(ask())
	erika := api.As(wt.Erika)
	id := start(t, erika)
	if r := erika.SendMessage(id, "Los"); r.Status != http.StatusAccepted {
		t.Fatalf("POST message = %d %s", r.Status, r.Body)
	}
	conv := untilSettled(t, erika, id)
	q := conv.Question
	if conv.Status != "awaiting_input" || q == nil {
		t.Fatalf("after the message: %+v", conv)
	}
	// The only worker goes away; the answer's job waits in the queue.
	first.StopWorkers()
	erika.Must("POST", path(id, "/answer"), map[string]any{"turnDigest": q.TurnDigest, "option": "formell"}, http.StatusAccepted)
	clk.Advance(10 * time.Minute)
	if c := read(t, erika, id); c.Status != "processing" || c.Question != nil {
		t.Fatalf("an answer waiting in the queue = status %v question %+v, want processing", c.Status, c.Question)
	}
	// A worker takes the job and stops before the answer reaches the run.
	if _, err := db.Exec(ctx, "UPDATE river_job SET state = 'running', attempt = 1, attempted_at = ? WHERE kind = 'waymark_chat' AND state = 'available'", clk.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	var args string
	col := "json(args)" // River's SQLite driver stores args as JSONB
	if db.Dialect() == store.Postgres {
		col = "args"
	}
	if err := db.QueryRow(ctx, "SELECT "+col+" FROM river_job WHERE kind = 'waymark_chat' ORDER BY id DESC LIMIT 1").Scan(&args); err != nil {
		t.Fatal(err)
	}
	var taken struct {
		Job json.RawMessage `json:"job"`
	}
	if err := json.Unmarshal([]byte(args), &taken); err != nil || len(taken.Job) == 0 {
		t.Fatalf("the answer's job %s: %v", args, err)
	}
	clk.Advance(30 * time.Second) // within the lease: its worker may be alive
	if _, err := api.App.Chat.Reap(ctx); err != nil {
		t.Fatal(err)
	}
	if c := read(t, erika, id); c.Status != "processing" || c.Question != nil {
		t.Fatalf("within the lease = status %v question %+v, want the answer still being carried out", c.Status, c.Question)
	}
	clk.Advance(time.Minute) // past the lease (60 s) since the worker took the job
	if _, err := api.App.Chat.Reap(ctx); err != nil {
		t.Fatal(err)
	}
	var state string
	if err := db.QueryRow(ctx, "SELECT state FROM river_job WHERE kind = 'waymark_chat' ORDER BY id DESC LIMIT 1").Scan(&state); err != nil {
		t.Fatal(err)
	}
	if c := read(t, erika, id); c.Status != "processing" || c.Question != nil || state != "available" {
		t.Fatalf("the lost answer after a lease = status %v question %+v, job %s; want it handed to the workers again, not the question offered again", c.Status, c.Question, state)
	}
	return lostAnswer{db: db, another: another, clk: clk, api: api, erika: erika, id: id, payload: taken.Job}
}

// answeredOnce checks that the conversation settled with the editor's one
// answer, the model got the choice, and the tour went on once.
func (l lostAnswer) answeredOnce(t *testing.T, modelCallsBefore int) wt.Conversation {
	t.Helper()
	// Waiting for the queue, not reading meanwhile: the fake clock is past
	// the lease, so a read while a worker carries the answer out would take
	// its job, taken just now by the database's clock, for lost.
	l.api.App.Chat.Wait()
	c := read(t, l.erika, l.id)
	if c.Status != "idle" || c.Question != nil || c.Error != "" {
		t.Fatalf("after a worker carried out the answer: %+v", c)
	}
	if n := said(c, "user", "formell"); n != 1 {
		t.Errorf("the transcript holds the editor's answer %d times, want once: %+v", n, c.Messages)
	}
	if n := said(c, "assistant", "Formell also."); n != 1 {
		t.Errorf("the tour's answer is in the transcript %d times, want once: %+v", n, c.Messages)
	}
	reqs := l.api.LLM.Requests()
	if n := len(reqs) - modelCallsBefore; n != 1 {
		t.Errorf("the model was called %d times for the answer, want once", n)
	}
	if last := reqs[len(reqs)-1].Messages; !strings.Contains(last[len(last)-1].Content, `"choice":"formell"`) {
		t.Errorf("the model got %q, want the editor's choice", last[len(last)-1].Content)
	}
	if st := l.erika.MustRun(c.LastRunUUID); st.Status != "completed" {
		t.Errorf("the tour's run = %v, want completed", st.Status)
	}
	return c
}

// A chat answer is never silently dropped — questions as cards: a question
// answered with 202 whose job a worker took and then stopped with, before
// the answer reached the run (the job left running, as kill -9 leaves it),
// is carried out after one lease, not offered to the editor again (it was:
// the question came back and the answer given was lost). Within the lease
// nothing changes; after it the reaper hands the job to the workers again
// and a surviving worker resumes the run with the answer once.
func TestAQuestionAnswerWhoseWorkerDiedBeforeItsClaimIsCarriedOutAfterALeaseNotAskedAgain(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		l := loseAnAnswer(t, db, another)
		before := len(l.api.LLM.Requests())
		l.api.LLM.Add(answer("Formell also."))
		wt.New(t, another(), "", &wt.Options{Workers: 1, ChatWorkers: 1, Clock: l.clk})
		l.answeredOnce(t, before)
	})
}

// The race the hand-back opens, both orders: the worker judged dead was
// only slow and carries the answer out after all, before or after a
// surviving worker took the handed-back job. Whichever comes first resumes
// the run with the answer; the other changes nothing — the answer is
// carried out once, the model called once, the transcript unchanged.
func TestAQuestionAnswerHandedBackIsCarriedOutOnceWhenItsSlowWorkerComesBack(t *testing.T) {
	late := func(t *testing.T, l lostAnswer) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// The slow worker is alive, unlike first (whose workers are stopped):
		// a process of its own works the very job it took.
		slow := wt.New(t, l.another(), "", &wt.Options{APIOnly: true, Clock: l.clk})
		if err := slow.App.Chat.Work(ctx, l.payload); err != nil {
			t.Fatalf("the slow worker's job: %v", err)
		}
	}
	t.Run("slow worker first", func(t *testing.T) {
		storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
			l := loseAnAnswer(t, db, another)
			before := len(l.api.LLM.Requests())
			l.api.LLM.Add(answer("Formell also."))
			late(t, l)
			wt.New(t, another(), "", &wt.Options{Workers: 1, ChatWorkers: 1, Clock: l.clk})
			c := l.answeredOnce(t, before)
			time.Sleep(200 * time.Millisecond) // the handed-back job, dropped, must change nothing
			l.api.App.Chat.Wait()
			if again := read(t, l.erika, l.id); again.Status != c.Status || len(again.Messages) != len(c.Messages) {
				t.Errorf("the handed-back job changed the conversation: %+v", again)
			}
		})
	})
	t.Run("handed-back job first", func(t *testing.T) {
		storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
			l := loseAnAnswer(t, db, another)
			before := len(l.api.LLM.Requests())
			l.api.LLM.Add(answer("Formell also."))
			wt.New(t, another(), "", &wt.Options{Workers: 1, ChatWorkers: 1, Clock: l.clk})
			c := l.answeredOnce(t, before)
			late(t, l)
			l.api.App.Chat.Wait()
			again := read(t, l.erika, l.id)
			if again.Status != c.Status || len(again.Messages) != len(c.Messages) || again.LastRunUUID != c.LastRunUUID {
				t.Errorf("the slow worker's late job changed the conversation: %+v", again)
			}
			if n := len(l.api.LLM.Requests()) - before; n != 1 {
				t.Errorf("the model was called %d times, want once", n)
			}
		})
	})
}
