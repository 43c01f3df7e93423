package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// Each model call's tokens, as the provider reports them, are kept and
// priced by the configuration's prices per million tokens: the card shows
// its run's cost, the conversation its tour's, and the administrators'
// report the month's per configuration. A later price change does not
// reprice what was recorded.
func TestModelCallsArePricedPerCardTourAndMonth(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, strings.Replace(site, "username: admin,", "username: admin, password: admin-pass-1234,", 1), nil)
		cfg := e.As(wt.Admin).Must("GET", "/api/admin/configurations/1", nil, http.StatusOK).Map(t)
		cfg["priceInputPerMTok"], cfg["priceOutputPerMTok"] = 2.5, 10.0
		e.As(wt.Admin).Must("PUT", "/api/admin/configurations/1", cfg, http.StatusOK)
		w := write("c1", `{"description": "Websites aus dem Norden, gebaut für Menschen und Suchmaschinen gleichermaßen."}`)
		w.Usage = llm.Usage{PromptTokens: 1000, CompletionTokens: 200}
		e.LLM.Add(w, llmtest.Reply{Content: "Fertig.", Usage: llm.Usage{PromptTokens: 3000, CompletionTokens: 100}})
		conv := e.As(wt.Erika).Must("POST", "/api/conversations", map[string]any{"page": 1, "language": 0}, http.StatusCreated).Map(t)
		id := conv["id"].(float64)
		path := "/api/conversations/" + ftoa(id)
		e.As(wt.Erika).Must("POST", path+"/messages", map[string]any{"content": "Beschreibung bitte"}, http.StatusAccepted)
		e.App.Chat.Wait()
		v := e.As(wt.Erika).Must("GET", path, nil, http.StatusOK).Map(t)
		card, _ := v["card"].(map[string]any)
		if card == nil {
			t.Fatalf("no card: %v", v)
		}
		// 1000 in at 2.50 and 200 out at 10.00 per million: 0.0025 + 0.002.
		want := map[string]any{"promptTokens": 1000.0, "completionTokens": 200.0, "cost": 0.0045}
		if c, _ := card["cost"].(map[string]any); !same(c, want) {
			t.Errorf("card cost = %v, want %v", c, want)
		}
		if c, _ := v["cost"].(map[string]any); !same(c, want) {
			t.Errorf("tour cost = %v, want %v", c, want)
		}
		// The chat shows both, small, under the card and the conversation (erika reads German).
		b := login(t, e, "erika", "erika-pass-1234")
		contains(t, "chat costs", b.get("/chat/"+ftoa(id)), `<p class="cost">Dieser Vorschlag: 1.000 Token rein, 200 raus, Kosten 0,0045</p>`,
			`<p class="cost">Diese Tour bisher: 1.000 Token rein, 200 raus, Kosten 0,0045</p>`)
		// The price changes; the recorded call keeps its price, the next is priced anew.
		cfg["priceInputPerMTok"], cfg["priceOutputPerMTok"] = 1.0, 1.0
		e.As(wt.Admin).Must("PUT", "/api/admin/configurations/1", cfg, http.StatusOK)
		e.As(wt.Erika).Must("POST", path+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": "approve"}, http.StatusAccepted)
		e.App.Chat.Wait()
		v = e.As(wt.Erika).Must("GET", path, nil, http.StatusOK).Map(t)
		wantTour := map[string]any{"promptTokens": 4000.0, "completionTokens": 300.0, "cost": 0.0045 + 0.0031}
		if c, _ := v["cost"].(map[string]any); !same(c, wantTour) {
			t.Errorf("tour cost after the second call = %v, want %v", c, wantTour)
		}
		month := time.Now().UTC().Format("2006-01")
		rep := e.As(wt.Admin).Must("GET", "/api/costs?month="+month, nil, http.StatusOK).Map(t)
		lines, _ := rep["configurations"].([]any)
		if len(lines) != 1 {
			t.Fatalf("report %v, want one configuration", rep)
		}
		l := lines[0].(map[string]any)
		if l["configuration"] != 1.0 || l["identifier"] != "chat" || l["model"] != "m" || l["calls"] != 2.0 || !same(l, wantTour) || !same(rep["total"].(map[string]any), wantTour) {
			t.Errorf("report line %v, total %v; want configuration 1 with %v over 2 calls", l, rep["total"], wantTour)
		}
		// The administrators' screen says the same (admin reads English).
		admin := login(t, e, "admin", "admin-pass-1234")
		contains(t, "costs screen", admin.get("/admin/costs?month="+month), "<caption>Model usage in "+month+", per configuration</caption>",
			"<td>Chat</td><td>m</td><td>2</td><td>4,000</td><td>300</td><td>0.0076</td>")
		if a := admin.get("/admin/costs?month=13-2026"); a.Status != http.StatusBadRequest || !strings.Contains(a.Body, "Not a month: 13-2026") {
			t.Errorf("a bad month on the screen = %d", a.Status)
		}
		empty := e.As(wt.Admin).Must("GET", "/api/costs?month=2001-01", nil, http.StatusOK).Map(t)
		if ls, _ := empty["configurations"].([]any); len(ls) != 0 {
			t.Errorf("a month without calls = %v, want none", empty)
		}
	})
}

// Bad input: a month that is not YYYY-MM, a price that is negative or not a
// number; each a 400 with a clear code, and nothing changes.
func TestCostsRefuseABadMonthAndABadPrice(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		for _, m := range []string{"2026-13", "2026", "next", "2026-1-01"} {
			if r := e.As(wt.Admin).Must("GET", "/api/costs?month="+m, nil, http.StatusBadRequest).Map(t); r["error"].(map[string]any)["code"] != "bad_month" {
				t.Errorf("month %q: %v, want code bad_month", m, r)
			}
		}
		e.As(wt.Erika).Must("GET", "/api/costs", nil, http.StatusForbidden)
		cfg := e.As(wt.Admin).Must("GET", "/api/admin/configurations/1", nil, http.StatusOK).Map(t)
		cfg["priceInputPerMTok"] = -1
		e.As(wt.Admin).Must("PUT", "/api/admin/configurations/1", cfg, http.StatusBadRequest)
		cfg["priceInputPerMTok"] = "ten"
		e.As(wt.Admin).Must("PUT", "/api/admin/configurations/1", cfg, http.StatusBadRequest)
		after := e.As(wt.Admin).Must("GET", "/api/admin/configurations/1", nil, http.StatusOK).Map(t)
		if after["priceInputPerMTok"] != 0.0 {
			t.Errorf("price after refused changes = %v, want 0", after["priceInputPerMTok"])
		}
	})
}

func same(got, want map[string]any) bool {
	for k, w := range want {
		g, ok := got[k].(float64)
		if !ok || g-w.(float64) > 1e-9 || w.(float64)-g > 1e-9 {
			return false
		}
	}
	return true
}

func ftoa(f float64) string { return strconv.FormatInt(int64(f), 10) }
