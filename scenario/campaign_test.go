package scenario_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"waymark/internal/demo"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// The campaign's wire shapes, as a client reads them.
type (
	campaignView struct {
		ID     int64  `json:"id"`
		Owner  int64  `json:"owner"`
		State  string `json:"state"`
		Counts struct {
			Total, Pending, Running, Proposals, Skipped, Failed, Done int
		} `json:"counts"`
		EstimatedSecondsLeft *int64 `json:"estimatedSecondsLeft"`
		WaitsForAnswers      bool   `json:"waitsForAnswers"`
	}
	campaignCard struct {
		Conversation int64    `json:"conversation"`
		TurnDigest   string   `json:"turnDigest"`
		Page         int64    `json:"page"`
		Kind         string   `json:"kind"`
		Answers      []string `json:"answers"`
		Fields       []struct {
			Field, Current, Proposed string
			Measure                  *struct{ Count, Min, Max int }
		} `json:"fields"`
		SearchPreview *struct {
			Title, Description string
		} `json:"searchPreview"`
	}
	campaignCards struct {
		Cards []campaignCard `json:"cards"`
		Total int            `json:"total"`
	}
	campaignResult struct {
		Conversation int64  `json:"conversation"`
		Outcome      string `json:"outcome"`
		Code         string `json:"code"`
	}
)

// untilCampaign reads campaign id until ok holds (or fails the test after 60 s).
func untilCampaign(t *testing.T, c *wt.Client, id int64, what string, ok func(campaignView) bool) campaignView {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		v := wt.Decode[campaignView](t, c.Must("GET", fmt.Sprintf("/api/campaigns/%d", id), nil, http.StatusOK))
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("campaign %d never %s: %+v", id, what, v)
		}
		time.Sleep(50 * time.Millisecond) // polling a condition of the running application
	}
}

// itemRows reads the items of campaign id as page → state/reason.
func itemRows(t *testing.T, db *store.DB, id int64) map[int64]string {
	t.Helper()
	rows, err := db.Query(t.Context(), "SELECT page_uid, state, reason FROM campaign_items WHERE campaign_id = ? ORDER BY position", id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var page int64
		var state, reason string
		if err := rows.Scan(&page, &state, &reason); err != nil {
			t.Fatal(err)
		}
		out[page] = strings.TrimSuffix(state+" "+reason, " ")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func pageDescription(t *testing.T, db *store.DB, uid int64) string {
	t.Helper()
	var fields string
	if err := db.QueryRow(t.Context(), "SELECT fields FROM records WHERE tbl = 'pages' AND uid = ?", uid).Scan(&fields); err != nil {
		t.Fatal(err)
	}
	return fields
}

// A campaign over the demo site's public subtree, as erika, on SQLite and
// PostgreSQL: every page she may edit gets its own tour that runs to its
// first card and waits, writing nothing; the Services branch, which she
// may only read, is skipped with its reason; the review list shows each
// card with its current and proposed value and its length range; a bulk
// apply in which one card changed since the list was drawn answers the
// others and names that one; cards of her campaign are unknown to another
// user's campaign and to another user; and after everything is answered
// the campaign counts its pages done.
func TestACampaignOverASubtreeRunsEachPageToItsFirstCardAndSkipsPagesTheOwnerMayNotEdit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), &wt.Options{Workers: 2, ChatWorkers: 4})
		erika, paula := e.As("demo-token-erika"), e.As("demo-token-paula")
		before := map[int64]string{}
		for _, p := range []int64{1, 2, 6, 7, 8} {
			before[p] = pageDescription(t, db, p)
		}
		v := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{
			"process": "seo-optimieren", "rootPage": 1, "depth": 2, "languages": []int64{0}, "budget": 5, "concurrency": 3}, http.StatusCreated))
		if v.State != "running" || v.Counts.Total != 8 {
			t.Fatalf("created: %+v, want running over 8 pages (1-8 without the deleted one)", v)
		}
		v = untilCampaign(t, erika, v.ID, "done", func(v campaignView) bool { return v.State == "done" })
		if v.Counts.Skipped != 3 || v.Counts.Proposals+v.Counts.Done != 5 || v.Counts.Failed != 0 {
			t.Fatalf("done: %+v, want 3 skipped and 5 worked", v.Counts)
		}
		items := itemRows(t, db, v.ID)
		for _, p := range []int64{3, 4, 5} {
			if items[p] != "skipped page_read_only" {
				t.Errorf("page %d: %q, want skipped page_read_only", p, items[p])
			}
		}
		for p, was := range before {
			if now := pageDescription(t, db, p); now != was {
				t.Errorf("page %d was written without an answer: %s → %s", p, was, now)
			}
		}
		// The review list.
		list := wt.Decode[campaignCards](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d/cards", v.ID), nil, http.StatusOK))
		if list.Total < 2 || len(list.Cards) != list.Total {
			t.Fatalf("cards: %+v, want at least two", list)
		}
		for i, c := range list.Cards {
			if i > 0 && c.Page < list.Cards[i-1].Page && c.Page != 1 {
				t.Errorf("cards not in page order: %d after %d", c.Page, list.Cards[i-1].Page)
			}
			if c.Kind == "" || len(c.Fields) == 0 || c.Fields[0].Proposed == "" || c.TurnDigest == "" {
				t.Errorf("card %+v lacks its kind, field or proposal", c)
			}
			// A card that changes a description shows the search result with it.
			if c.Fields[0].Field == "description" && (c.SearchPreview == nil || c.SearchPreview.Description != c.Fields[0].Proposed) {
				t.Errorf("card of page %d: search preview %+v, want one with the proposed description %q", c.Page, c.SearchPreview, c.Fields[0].Proposed)
			}
		}
		one := wt.Decode[campaignCards](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d/cards?page=%d&limit=1", v.ID, list.Cards[0].Page), nil, http.StatusOK))
		if len(one.Cards) != 1 || one.Cards[0].Page != list.Cards[0].Page {
			t.Errorf("cards of page %d: %+v", list.Cards[0].Page, one)
		}
		// Paula may not read or answer erika's campaign: 404 like unknown.
		for _, path := range []string{"", "/cards"} {
			if r := paula.Do("GET", fmt.Sprintf("/api/campaigns/%d%s", v.ID, path), nil); r.Status != http.StatusNotFound || r.ErrorCode() != "not_found" {
				t.Errorf("paula GET %s: %d %s, want 404 not_found", path, r.Status, r.Body)
			}
		}
		refs := []map[string]any{}
		for _, c := range list.Cards {
			refs = append(refs, map[string]any{"conversation": c.Conversation, "turnDigest": c.TurnDigest})
		}
		if r := paula.Do("POST", fmt.Sprintf("/api/campaigns/%d/answers", v.ID), map[string]any{"answer": "apply", "cards": refs}); r.Status != http.StatusNotFound {
			t.Errorf("paula answers erika's campaign: %d %s, want 404", r.Status, r.Body)
		}
		// Cards of this campaign named in paula's own campaign are unknown there.
		pv := wt.Decode[campaignView](t, paula.Must("POST", "/api/campaigns", map[string]any{"process": "seo-optimieren", "rootPage": 7}, http.StatusCreated))
		res := wt.Decode[struct{ Results []campaignResult }](t, paula.Must("POST", fmt.Sprintf("/api/campaigns/%d/answers", pv.ID),
			map[string]any{"answer": "apply", "cards": refs[:1]}, http.StatusOK))
		if len(res.Results) != 1 || res.Results[0].Outcome != "refused" || res.Results[0].Code != "not_found" {
			t.Errorf("erika's card in paula's campaign: %+v, want refused not_found", res.Results)
		}
		// One card changes before the bulk answer: erika asks for another
		// variant of it in the chat; the bulk apply names it and applies the rest.
		changed := list.Cards[0]
		erika.Must("POST", fmt.Sprintf("/api/conversations/%d/answer", changed.Conversation), map[string]any{"turnDigest": changed.TurnDigest, "answer": "variant"}, http.StatusAccepted)
		res = wt.Decode[struct{ Results []campaignResult }](t, erika.Must("POST", fmt.Sprintf("/api/campaigns/%d/answers", v.ID),
			map[string]any{"answer": "apply", "cards": refs}, http.StatusOK))
		if len(res.Results) != len(refs) {
			t.Fatalf("results: %+v, want one per card", res.Results)
		}
		for i, r := range res.Results {
			want := "answered"
			if i == 0 {
				want = "refused"
			}
			if r.Outcome != want || r.Conversation != list.Cards[i].Conversation {
				t.Errorf("result %d: %+v, want %s", i, r, want)
			}
		}
		if res.Results[0].Code != "stale_card" {
			t.Errorf("the changed card: %+v, want stale_card", res.Results[0])
		}
		applied := 0
		deadline := time.Now().Add(30 * time.Second)
		for applied == 0 && time.Now().Before(deadline) {
			for _, c := range list.Cards[1:] {
				if pageDescription(t, db, c.Page) != before[c.Page] {
					applied++
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		if applied == 0 {
			t.Errorf("no page written after the bulk apply")
		}
	})
}

// Pause, resume and cancel: each a guarded change that a campaign in the
// wrong state refuses with campaign_state, changing nothing; a paused
// campaign starts no page; a cancelled one skips the pages not started.
func TestACampaignPausesResumesAndCancelsAndRefusesWrongChanges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), &wt.Options{Workers: 1, ChatWorkers: 2})
		erika, admin := e.As("demo-token-erika"), e.As("demo-token-admin")
		e.StopWorkers() // nothing is worked: the states alone
		v := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{"process": "seo-optimieren", "rootPage": 1, "depth": 1}, http.StatusCreated))
		path := fmt.Sprintf("/api/campaigns/%d", v.ID)
		if r := erika.Do("POST", path+"/resume", nil); r.Status != http.StatusConflict || r.ErrorCode() != "campaign_state" {
			t.Errorf("resume of a running campaign: %d %s", r.Status, r.Body)
		}
		if got := wt.Decode[campaignView](t, erika.Must("POST", path+"/pause", nil, http.StatusOK)); got.State != "paused" {
			t.Errorf("paused: %+v", got)
		}
		if r := erika.Do("POST", path+"/pause", nil); r.Status != http.StatusConflict || r.ErrorCode() != "campaign_state" {
			t.Errorf("second pause: %d %s", r.Status, r.Body)
		}
		// An administrator may resume it; then erika cancels.
		if got := wt.Decode[campaignView](t, admin.Must("POST", path+"/resume", nil, http.StatusOK)); got.State != "running" {
			t.Errorf("resumed: %+v", got)
		}
		got := wt.Decode[campaignView](t, erika.Must("POST", path+"/cancel", nil, http.StatusOK))
		if got.State != "cancelled" || got.Counts.Pending != 0 || got.Counts.Skipped != got.Counts.Total {
			t.Errorf("cancelled: %+v, want every page skipped", got)
		}
		for p, s := range itemRows(t, db, v.ID) {
			if s != "skipped cancelled" {
				t.Errorf("page %d after cancel: %q", p, s)
			}
		}
		for _, ev := range []string{"pause", "resume", "cancel"} {
			if r := erika.Do("POST", path+"/"+ev, nil); r.Status != http.StatusConflict || r.ErrorCode() != "campaign_state" {
				t.Errorf("%s of a cancelled campaign: %d %s", ev, r.Status, r.Body)
			}
		}
		var n int
		if err := db.QueryRow(t.Context(), "SELECT COUNT(*) FROM conversations").Scan(&n); err != nil || n != 0 {
			t.Errorf("conversations after a campaign never worked: %d, %v", n, err)
		}
	})
}

// Bad requests get a clear error and make nothing.
func TestACampaignRequestThatCouldNeverRunIsRefusedAndMakesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), &wt.Options{APIOnly: true})
		erika := e.As("demo-token-erika")
		for _, c := range []struct {
			name   string
			body   any
			status int
			code   string
		}{
			{"unknown process", map[string]any{"process": "gibt-es-nicht", "rootPage": 1}, 409, "skill_unavailable"},
			{"no process", map[string]any{"rootPage": 1}, 400, "bad_request"},
			{"unknown page", map[string]any{"process": "seo-optimieren", "rootPage": 999}, 404, "not_found"},
			{"page outside her mounts", map[string]any{"process": "seo-optimieren", "rootPage": 20}, 404, "not_found"},
			{"neither page nor filter", map[string]any{"process": "seo-optimieren"}, 400, "bad_request"},
			{"unknown filter", map[string]any{"process": "seo-optimieren", "filter": "zuLang"}, 400, "bad_request"},
			{"depth out of range", map[string]any{"process": "seo-optimieren", "rootPage": 1, "depth": 11}, 400, "bad_request"},
			{"negative depth", map[string]any{"process": "seo-optimieren", "rootPage": 1, "depth": -1}, 400, "bad_request"},
			{"concurrency out of range", map[string]any{"process": "seo-optimieren", "rootPage": 1, "concurrency": 9}, 400, "bad_request"},
			{"negative concurrency", map[string]any{"process": "seo-optimieren", "rootPage": 1, "concurrency": -1}, 400, "bad_request"},
			{"budget not a number at all", map[string]any{"process": "seo-optimieren", "rootPage": 1, "budget": true}, 400, "bad_request"},
			{"budget a number in a string", map[string]any{"process": "seo-optimieren", "rootPage": 1, "budget": "5"}, 400, "bad_request"},
			{"budget not a number", map[string]any{"process": "seo-optimieren", "rootPage": 1, "budget": "zehn"}, 400, "bad_request"},
			{"negative budget", map[string]any{"process": "seo-optimieren", "rootPage": 1, "budget": -1}, 400, "bad_request"},
			{"process on four eyes", map[string]any{"process": "seo-optimieren", "configuration": 2, "rootPage": 1}, 409, "skill_unavailable"},
			{"unknown configuration", map[string]any{"process": "seo-optimieren", "configuration": 99, "rootPage": 1}, 404, "configuration_not_found"},
			{"NUL in the process", `{"process": "seo\u0000", "rootPage": 1}`, 400, "invalid_text"},
		} {
			r := erika.Do("POST", "/api/campaigns", c.body)
			if r.Status != c.status || r.ErrorCode() != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
			}
		}
		var n int
		if err := db.QueryRow(t.Context(), "SELECT COUNT(*) FROM campaigns").Scan(&n); err != nil || n != 0 {
			t.Errorf("campaigns after refused requests: %d, %v", n, err)
		}
		v := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{"process": "seo-optimieren", "filter": "descriptionMissing"}, http.StatusCreated))
		if v.Counts.Total == 0 {
			t.Errorf("a filter campaign: %+v", v)
		}
		for _, c := range []struct {
			name string
			body any
			code string
		}{
			{"NUL in the instruction", `{"answer": "variant", "instruction": "k\u0000rzer", "cards": [{"conversation": 1, "turnDigest": "x"}]}`, "invalid_text"},
			{"unknown answer", map[string]any{"answer": "approve", "cards": []any{map[string]any{"conversation": 1, "turnDigest": "x"}}}, "bad_request"},
			{"no cards", map[string]any{"answer": "apply", "cards": []any{}}, "bad_request"},
			{"instruction without a variant", map[string]any{"answer": "skip", "instruction": "kürzer", "cards": []any{map[string]any{"conversation": 1, "turnDigest": "x"}}}, "bad_request"},
		} {
			if r := erika.Do("POST", fmt.Sprintf("/api/campaigns/%d/answers", v.ID), c.body); r.Status != http.StatusBadRequest || r.ErrorCode() != c.code {
				t.Errorf("%s: %d %s, want 400 %s", c.name, r.Status, r.Body, c.code)
			}
		}
		if r := erika.Do("GET", "/api/campaigns/999", nil); r.Status != http.StatusNotFound {
			t.Errorf("unknown campaign: %d", r.Status)
		}
	})
}

// campaignSnapshot is what a refused answer must leave as it was: the
// campaign's waiting cards (conversation, turn digest, proposals), the
// descriptions of its pages, and every conversation's messages and outcomes.
func campaignSnapshot(t *testing.T, c *wt.Client, db *store.DB, id int64) string {
	t.Helper()
	list := wt.Decode[campaignCards](t, c.Must("GET", fmt.Sprintf("/api/campaigns/%d/cards?limit=200", id), nil, http.StatusOK))
	var b strings.Builder
	for _, card := range list.Cards {
		fmt.Fprintf(&b, "card %d %s page %d:", card.Conversation, card.TurnDigest, card.Page)
		for _, f := range card.Fields {
			fmt.Fprintf(&b, " %s=%q", f.Field, f.Proposed)
		}
		fmt.Fprintf(&b, " description %s\n", pageDescription(t, db, card.Page))
	}
	for _, table := range []string{"conversation_messages", "conversation_outcomes", "campaign_items"} {
		var n int
		if err := db.QueryRow(t.Context(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d\n", table, n)
	}
	return b.String()
}

// Bad answers to a campaign's real cards, on SQLite and PostgreSQL: an
// instruction or turn digest with text the database cannot store, an
// answer the cards do not take, an instruction without a variant or too
// long, no cards; cards named in another campaign of the same owner or of
// another user, and another user answering the campaign. Each is a clear
// error — or, for a card not of the campaign, a result refused like an
// unknown card — and no card, page, message or outcome changes.
func TestBadAnswersToACampaignsCardsAreRefusedAndChangeNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), &wt.Options{Workers: 2, ChatWorkers: 4})
		erika, paula := e.As("demo-token-erika"), e.As("demo-token-paula")
		v := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{"process": "seo-optimieren", "rootPage": 1, "depth": 2}, http.StatusCreated))
		untilCampaign(t, erika, v.ID, "done", func(v campaignView) bool { return v.State == "done" })
		list := wt.Decode[campaignCards](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d/cards", v.ID), nil, http.StatusOK))
		if len(list.Cards) < 2 {
			t.Fatalf("cards: %+v, want two or more", list)
		}
		// The other campaigns, made before the snapshot: their own tours run meanwhile.
		other := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{"process": "seo-optimieren", "rootPage": 7}, http.StatusCreated))
		paulas := wt.Decode[campaignView](t, paula.Must("POST", "/api/campaigns", map[string]any{"process": "seo-optimieren", "rootPage": 7}, http.StatusCreated))
		untilCampaign(t, erika, other.ID, "done", func(v campaignView) bool { return v.State == "done" })
		untilCampaign(t, paula, paulas.ID, "done", func(v campaignView) bool { return v.State == "done" })
		before := campaignSnapshot(t, erika, db, v.ID)

		card := list.Cards[0]
		ref := fmt.Sprintf(`{"conversation": %d, "turnDigest": %q}`, card.Conversation, card.TurnDigest)
		answers := fmt.Sprintf("/api/campaigns/%d/answers", v.ID)
		for _, c := range []struct {
			name   string
			who    *wt.Client
			path   string
			body   string
			status int
			code   string
		}{
			{"NUL in the instruction", erika, answers, `{"answer": "variant", "instruction": "k\u0000rzer", "cards": [` + ref + `]}`, 400, "invalid_text"},
			{"NUL in the turn digest", erika, answers, fmt.Sprintf(`{"answer": "apply", "cards": [{"conversation": %d, "turnDigest": "v1\u0000"}]}`, card.Conversation), 400, "invalid_text"},
			{"an answer the cards do not take", erika, answers, `{"answer": "approve", "cards": [` + ref + `]}`, 400, "bad_request"},
			{"an instruction without a variant", erika, answers, `{"answer": "skip", "instruction": "kürzer", "cards": [` + ref + `]}`, 400, "bad_request"},
			{"an instruction too long", erika, answers, `{"answer": "variant", "instruction": "` + strings.Repeat("x", 501) + `", "cards": [` + ref + `]}`, 400, "bad_request"},
			{"no cards", erika, answers, `{"answer": "apply", "cards": []}`, 400, "bad_request"},
			{"cards that are not a list", erika, answers, `{"answer": "apply", "cards": "alle"}`, 400, "bad_request"},
			{"an unknown campaign", erika, "/api/campaigns/999999/answers", `{"answer": "apply", "cards": [` + ref + `]}`, 404, "not_found"},
			{"another user's campaign", paula, answers, `{"answer": "apply", "cards": [` + ref + `]}`, 404, "not_found"},
		} {
			if r := c.who.Do("POST", c.path, c.body); r.Status != c.status || r.ErrorCode() != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
			}
		}
		// Cards of this campaign named in another: refused like unknown ones.
		for _, c := range []struct {
			name string
			who  *wt.Client
			id   int64
		}{{"erika's other campaign", erika, other.ID}, {"paula's campaign", paula, paulas.ID}} {
			res := wt.Decode[struct{ Results []campaignResult }](t, c.who.Must("POST", fmt.Sprintf("/api/campaigns/%d/answers", c.id),
				`{"answer": "apply", "cards": [`+ref+`]}`, http.StatusOK))
			if len(res.Results) != 1 || res.Results[0].Conversation != card.Conversation || res.Results[0].Outcome != "refused" || res.Results[0].Code != "not_found" {
				t.Errorf("the card in %s: %+v, want refused not_found", c.name, res.Results)
			}
		}
		if after := campaignSnapshot(t, erika, db, v.ID); after != before {
			t.Errorf("a refused answer changed something:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		// The card still takes its answer.
		res := wt.Decode[struct{ Results []campaignResult }](t, erika.Must("POST", answers, `{"answer": "skip", "cards": [`+ref+`]}`, http.StatusOK))
		if len(res.Results) != 1 || res.Results[0].Outcome != "answered" {
			t.Errorf("the card after the refusals: %+v, want answered", res.Results)
		}
	})
}

// A card whose run stopped waiting outside the review list — here its run
// cancelled through the runs API — leaves the list at its next read: the
// list no longer shows it nor counts it, with a filter by field too, and
// the campaign counts its page as no longer waiting on an answer.
func TestACardWhoseRunStoppedWaitingLeavesTheReviewListAndItsCount(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, string(demo.Fixture), &wt.Options{Workers: 2, ChatWorkers: 4})
		erika := e.As("demo-token-erika")
		v := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{
			"process": "seo-optimieren", "rootPage": 1, "depth": 2, "languages": []int64{0}, "concurrency": 3}, http.StatusCreated))
		v = untilCampaign(t, erika, v.ID, "done", func(v campaignView) bool { return v.State == "done" })
		cards := fmt.Sprintf("/api/campaigns/%d/cards", v.ID)
		list := wt.Decode[campaignCards](t, erika.Must("GET", cards, nil, http.StatusOK))
		if list.Total < 2 || v.Counts.Proposals != list.Total {
			t.Fatalf("cards: %d, counts %+v: want at least two, one per page with proposals", list.Total, v.Counts)
		}
		gone := list.Cards[0]
		conv := wt.Decode[struct {
			PendingRun string `json:"pendingRunUuid"`
		}](t, erika.Must("GET", fmt.Sprintf("/api/conversations/%d", gone.Conversation), nil, http.StatusOK))
		if conv.PendingRun == "" {
			t.Fatalf("conversation %d waits on no run", gone.Conversation)
		}
		erika.Must("POST", "/api/runs/"+conv.PendingRun+"/cancel", nil, http.StatusOK)

		field := gone.Fields[0].Field
		withField := 0 // the cards the filter by field showed before
		for _, c := range list.Cards {
			for _, f := range c.Fields {
				if f.Field == field {
					withField++
					break
				}
			}
		}
		for path, want := range map[string]int{cards: list.Total - 1, cards + "?field=" + field: withField - 1} {
			after := wt.Decode[campaignCards](t, erika.Must("GET", path, nil, http.StatusOK))
			if after.Total != want || len(after.Cards) != after.Total {
				t.Errorf("%s: %d cards (%d shown), want %d", path, after.Total, len(after.Cards), want)
			}
			for _, c := range after.Cards {
				if c.Conversation == gone.Conversation {
					t.Errorf("%s still shows the card of the cancelled run (conversation %d)", path, c.Conversation)
				}
			}
		}
		now := wt.Decode[campaignView](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d", v.ID), nil, http.StatusOK))
		if now.Counts.Proposals != v.Counts.Proposals-1 || now.Counts.Done+now.Counts.Failed != v.Counts.Done+v.Counts.Failed+1 {
			t.Errorf("counts after the cancel: %+v, want one page moved from proposals (was %+v)", now.Counts, v.Counts)
		}
	})
}
