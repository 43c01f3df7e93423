package hostile_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// Text PostgreSQL cannot store — a NUL byte, bytes that are
// not UTF-8 — in a request field, a path segment, a query value or a
// username answers 400 invalid_text on both databases and changes nothing.
func TestTextPostgreSQLCannotStoreIsInvalidTextOnBothDatabases(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		erika := e.As(wt.Erika)
		conv := wt.Decode[wt.Conversation](t, erika.Must("POST", "/api/conversations", map[string]any{"page": 1, "language": 0}, http.StatusCreated))
		convPath := fmt.Sprintf("/api/conversations/%d", conv.ID)
		before := map[string]int{}
		tables := []string{"runs", "conversation_messages", "skills", "skill_sources", "sessions"}
		for _, tb := range tables {
			before[tb] = count(t, e, tb)
		}
		cases := []struct {
			name, method, path, body string
			as                       string // token; "" anonymous
		}{
			{"username with NUL", "POST", "/api/login", `{"username": "erika\u0000", "password": "x"}`, ""},
			{"password with NUL", "POST", "/api/login", `{"username": "erika", "password": "pw\u0000"}`, ""},
			{"run message with NUL", "POST", "/api/runs", `{"configuration": 1, "messages": [{"role": "user", "content": "hi\u0000there"}]}`, wt.Erika},
			{"tool name with NUL", "POST", "/api/runs", `{"configuration": 1, "allowedTools": ["read_page\u0000"], "messages": [{"role": "user", "content": "hi"}]}`, wt.Erika},
			{"chat message with NUL", "POST", convPath + "/messages", `{"content": "\u0000"}`, wt.Erika},
			{"skill markdown with NUL", "POST", "/api/skills", `{"source": 1, "identifier": "x", "markdown": "---\nname: X\u0000\n---\n"}`, wt.Admin},
			{"object key with NUL", "POST", "/api/runs", `{"configuration": 1, "messages": [{"role": "user", "content": "hi", "x\u0000": 1}]}`, wt.Erika},
			{"path segment with NUL", "GET", "/api/runs/abc%00def", "", wt.Erika},
			{"path segment not UTF-8", "GET", "/api/runs/%ff%fe", "", wt.Erika},
			{"query value with NUL", "GET", "/api/inbox?after=%00", "", wt.Erika},
		}
		for _, c := range cases {
			client := e.As(c.as)
			var body any
			if c.body != "" {
				body = c.body
			}
			r := client.Do(c.method, c.path, body)
			if r.Status != http.StatusBadRequest || r.ErrorCode() != "invalid_text" {
				t.Errorf("%s: %s %s = %d %s, want 400 invalid_text", c.name, c.method, c.path, r.Status, r.Body)
			}
		}
		for _, tb := range tables {
			if n := count(t, e, tb); n != before[tb] {
				t.Errorf("rows of %s = %d after the refused requests, want %d", tb, n, before[tb])
			}
		}
		// Escaped text that is storable stays allowed: a backslash followed by "u0000".
		r := e.As("").Do("POST", "/api/login", `{"username": "erika\\u0000", "password": "x"}`)
		if r.Status != http.StatusUnauthorized {
			t.Errorf(`login with the storable username "erika\\u0000" = %d %s, want 401`, r.Status, r.Body)
		}
	})
}

// A value the model proposes that cannot be stored is an
// error result the model reads, never a failed run; nothing is written.
func TestModelProposedNULIsAnErrorResultNotAFailedRun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		e.LLM.Add(
			toolCall("c1", "update_page_metadata", `{"page": 1, "fields": {"description": "Bad\u0000text"}}`),
			answer("I could not store that."),
		)
		was := fields(t, e, "pages", 1)
		erika := e.As(wt.Erika)
		st := wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs", map[string]any{"configuration": 1,
			"messages": []map[string]string{{"role": "user", "content": "Improve the description"}}}, http.StatusCreated))
		pending := st.Pending
		if st.Status != "waiting_for_approval" || pending == nil {
			t.Fatalf("run = %+v, want waiting_for_approval", st)
		}
		call := pending.Calls[0]
		if !strings.Contains(call.PreviewError, "cannot be stored") {
			t.Errorf("card call = %+v, want a previewError saying the text cannot be stored", call)
		}
		st = wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs/"+st.UUID+"/approval",
			map[string]any{"approve": true, "turnDigest": pending.TurnDigest}, http.StatusOK))
		if st.Status != "completed" {
			t.Fatalf("run after the approval = %+v, want completed", st)
		}
		if got := fields(t, e, "pages", 1); got != was {
			t.Errorf("page 1 fields = %s, want unchanged %s", got, was)
		}
		reqs := e.LLM.Requests()
		if len(reqs) != 2 {
			t.Fatalf("model requests = %d, want 2", len(reqs))
		}
		last := reqs[1].Messages[len(reqs[1].Messages)-1]
		if last.Role != "tool" || !strings.Contains(last.Content, "cannot be stored") {
			t.Errorf("tool result to the model = %+v, want an error saying the text cannot be stored", last)
		}
	})
}

// A model answer holding a NUL byte is stored alike on both
// databases (the byte dropped), and the conversation goes on.
func TestModelAnswerWithNULIsStoredAlikeOnBothDatabases(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		e.LLM.Add(answer("Hallo\x00 Welt"))
		erika := e.As(wt.Erika)
		conv := wt.Decode[wt.Conversation](t, erika.Must("POST", "/api/conversations", map[string]any{"page": 1, "language": 0}, http.StatusCreated))
		path := fmt.Sprintf("/api/conversations/%d", conv.ID)
		erika.Must("POST", path+"/messages", map[string]any{"content": "Hallo"}, http.StatusAccepted)
		e.App.Chat.Wait()
		got := wt.Decode[wt.Conversation](t, erika.Must("GET", path, nil, http.StatusOK))
		msgs := got.Messages
		last := msgs[len(msgs)-1]
		if got.Error != "" || last.Content != "Hallo Welt" {
			t.Errorf("conversation after a NUL in the answer = error %v, last message %+v; want the answer without the NUL", got.Error, last)
		}
	})
}

// Invalid UTF-8 in a JSON string was decoded to U+FFFD and stored, although
// the API promises 400 invalid_text: a value or key with bytes that are not
// UTF-8 is refused on both databases, naming where, and changes nothing;
// valid non-ASCII text in the same places is taken.
func TestInvalidUTF8InAJSONStringIsInvalidTextNotStoredAsReplacementCharacters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		erika := e.As(wt.Erika)
		conv := wt.Decode[wt.Conversation](t, erika.Must("POST", "/api/conversations", map[string]any{"page": 1, "language": 0}, http.StatusCreated))
		convPath := fmt.Sprintf("/api/conversations/%d", conv.ID)
		tables := []string{"runs", "conversation_messages", "skills", "sessions", "be_users"}
		before := map[string]int{}
		for _, tb := range tables {
			before[tb] = count(t, e, tb)
		}
		cases := []struct {
			name, method, path, body, as, says string
		}{
			{"chat message", "POST", convPath + "/messages", "{\"content\": \"Gr\xfc\xdfe\"}", wt.Erika, `field \"content\"`},
			{"run message", "POST", "/api/runs", "{\"configuration\": 1, \"messages\": [{\"role\": \"user\", \"content\": \"hi \xff\"}]}", wt.Erika, `field \"content\"`},
			{"object key", "POST", "/api/runs", "{\"configuration\": 1, \"messages\": [{\"role\": \"user\", \"content\": \"hi\", \"k\xfe\": 1}]}", wt.Erika, "object key"},
			{"username at login", "POST", "/api/login", "{\"username\": \"erika\xc3\", \"password\": \"x\"}", "", `field \"username\"`},
			{"new user's name", "POST", "/api/admin/users", "{\"username\": \"u\xed\xa0\x80\", \"password\": \"long-enough\", \"groups\": [1]}", wt.Admin, `field \"username\"`},
		}
		for _, c := range cases {
			r := e.As(c.as).Do(c.method, c.path, c.body)
			if r.Status != http.StatusBadRequest || r.ErrorCode() != "invalid_text" || !strings.Contains(string(r.Body), c.says) {
				t.Errorf("%s: %s %s = %d %s, want 400 invalid_text naming %s", c.name, c.method, c.path, r.Status, r.Body, c.says)
			}
		}
		for _, tb := range tables {
			if n := count(t, e, tb); n != before[tb] {
				t.Errorf("rows of %s = %d after the refused requests, want %d", tb, n, before[tb])
			}
		}
		e.LLM.Add(answer("Hallo."))
		if r := erika.Do("POST", convPath+"/messages", `{"content": "Grüße, 你好"}`); r.Status != http.StatusAccepted {
			t.Errorf("valid UTF-8 message = %d %s, want 202", r.Status, r.Body)
		}
		e.App.Chat.Wait()
	})
}
