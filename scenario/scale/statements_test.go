package scale_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// answerBudget bounds the store statements of one card answer on SQLite:
// the answer's request, the decision's job up to the next card, and the
// read of that card (what `waymark bench` counts per answer, less its share
// of starting and ending tours and of waiting). Measured 2026-12-03: 48 (63
// before that day's work). A change that reads the same thing again per
// answer shows here first (on SQLite the bench's speed follows
// the statements per answer). 2026-12-07: 54 — the answer's two priced
// model rounds each keep their usage row (run_usage, what the costs report
// reads), one INSERT each on SQLite beside the transition that records the
// tokens.
const answerBudget = 54

// A card answer, carried out on a worker, and the read of the
// next card stay within answerBudget statements.
func TestACardAnswerAndTheReadOfTheNextCardStayWithinTheirStatementBudget(t *testing.T) {
	db := storetest.Open(t, store.SQLite)
	if !db.FastPaths() {
		t.Skip("the budget counts with the store's fast paths on (WAYMARK_STORE_NO_FAST_PATHS is set)")
	}
	e := wt.New(t, db, site, &wt.Options{Workers: 1, ChatWorkers: 1})
	e.LLM.Add(write("c1", `{"description": "Eins"}`), write("c2", `{"seoTitle": "Zwei"}`), answer("Fertig."))
	erika := e.As(wt.Erika)
	id := start(t, erika)
	conv := send(t, e, erika, id, "Los")
	if conv.Card == nil {
		t.Fatalf("no first card: %+v", conv)
	}
	first := conv.Card.TurnDigest
	before := db.Statements()
	erika.Must("POST", path(id, "/answer"), wt.Answer{TurnDigest: first, Answer: "skip"}, http.StatusAccepted)
	// Wait for the decision's job uncounted: the conversation's change
	// signal, and its status read past the store's counter (db.SQL).
	deadline := time.After(20 * time.Second)
	for {
		ch, release := e.App.Chat.WatchChange(id)
		var status string
		if err := db.SQL.QueryRowContext(t.Context(), "SELECT status FROM conversations WHERE id = ?", id).Scan(&status); err != nil {
			t.Fatal(err)
		}
		if status != "processing" {
			release()
			break
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("the decision's job did not settle the conversation within 20 s")
		}
		release()
	}
	stamp := wt.Decode[wt.ConversationStamp](t, erika.Must("GET", path(id, ""), nil, http.StatusOK))
	used := db.Statements() - before
	if stamp.Card == nil || stamp.Card.TurnDigest == first {
		t.Fatalf("after the answer: %+v, want the next card", stamp)
	}
	t.Logf("one card answer: %d statements (budget %d)", used, answerBudget)
	if used > answerBudget {
		t.Errorf("one card answer used %d statements, budget %d", used, answerBudget)
	}
}

// The names a conversation shows are kept for a settings generation,
// and a change of them moves it (migration 00017): a skill
// renamed by an administrator is shown under its new name at the next read.
func TestAConversationShowsItsSkillsNewNameAtTheNextRead(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, site, nil)
		erika := e.As(wt.Erika)
		id := start(t, erika)
		if c := read(t, erika, id); c.Skill == nil || c.Skill.Name != "SEO optimieren" {
			t.Fatalf("skill before the rename: %+v", c.Skill)
		}
		read(t, erika, id) // from memory now
		md := "---\nname: SEO verbessern\ndescription: Die Seite verbessern.\nprocess: true\n" +
			"allowed-tools: [read_page, update_page_metadata, update_content, set_progress]\n---\nEine Änderung pro Schritt."
		e.As(wt.Admin).Must("PUT", "/api/skills/"+strconv.Itoa(seo), map[string]any{"markdown": md}, http.StatusOK)
		if c := read(t, erika, id); c.Skill == nil || c.Skill.Name != "SEO verbessern" || c.Skill.Identifier != "seo" {
			t.Errorf("skill after the rename: %+v, want the name SEO verbessern", c.Skill)
		}
	})
}
