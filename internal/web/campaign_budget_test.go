package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// The dashboard's campaign form shows the estimate before the start — the
// pages × the tokens per tour (the default: the process has no earlier
// tour), the cost at the configuration's prices and that it passes the
// budget — and makes nothing; its start button then starts the campaign,
// whose progress shows what it spent against its budget and, once its
// first tour cost the budget, that it started no further page.
func TestCampaignFormShowsTheCostEstimateBeforeTheStartAndTheProgressTheBudget(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		cfg := e.As(wt.Admin).Must("GET", "/api/admin/configurations/1", nil, http.StatusOK).Map(t)
		cfg["priceInputPerMTok"], cfg["priceOutputPerMTok"] = 2.5, 10.0
		e.As(wt.Admin).Must("PUT", "/api/admin/configurations/1", cfg, http.StatusOK)
		e.LLM.Add(llmtest.Reply{Content: "Alles gut.", Usage: llm.Usage{PromptTokens: 1000, CompletionTokens: 200}})
		erika := login(t, e, "erika", "erika-pass-1234")
		contains(t, "dashboard", erika.get("/dashboard"), `name="step" value="estimate"`, ">Kosten schätzen</button>")
		form := campaignForm(seo, "1", "1", "0,001")
		form.Set("step", "estimate")
		est := erika.post("/campaigns", form)
		// Pages 1 and 2 × (30000 in at 2.50 + 2000 out at 10.00 per million) = 0.19.
		contains(t, "estimate", est, `id="campaign-estimate" role="status"`,
			"2 Seiten × 30.000 Token rein und 2.000 raus pro Tour (ein Vorgabewert: dieser Prozess hat noch keine Tour).",
			"Etwa 0,1900 in der Währung der Konfiguration.", "Das ist mehr als das Budget von 0,0010",
			`name="step" value="start"`, ">Kampagne starten</button>", `value="0,001"`)
		if est.Header.Get("HX-Redirect") != "" || campaignCount(t, db) != 0 {
			t.Fatalf("the estimate started a campaign: %q, %d", est.Header.Get("HX-Redirect"), campaignCount(t, db))
		}
		form.Set("step", "start")
		to := erika.post("/campaigns", form).Header.Get("HX-Redirect")
		m := campaignPath.FindStringSubmatch(to)
		if m == nil {
			t.Fatalf("the start led to %q", to)
		}
		deadline := time.Now().Add(30 * time.Second)
		for e.As(wt.Erika).Must("GET", "/api/campaigns/"+m[1], nil, http.StatusOK).Map(t)["state"] != "budget_reached" {
			if time.Now().After(deadline) {
				t.Fatalf("campaign %s never reached its budget", m[1])
			}
			time.Sleep(50 * time.Millisecond) // polling the running application
		}
		page := erika.get(to)
		contains(t, "campaign at its budget", page, `data-state="budget_reached"`, "<strong>Budget erreicht</strong>",
			`<p class="spent" id="campaign-spent">Bisher ausgegeben: 0,0045 von 0,0010 Budget</p>`, `id="campaign-budget-reached"`,
			"nicht gestartet: das Budget war erreicht")
		if strings.Contains(page.Body, `hx-trigger="every 3s"`) {
			t.Errorf("a campaign at its budget still refreshes its progress")
		}
	})
}

// A budget the form cannot read as a decimal number — "NaN", "Inf" and a
// hexadecimal float, which Go's number parser takes — is refused on the
// form, naming the budget, for the estimate and the start alike, and no
// campaign starts.
func TestCampaignFormRefusesABudgetThatIsNotADecimalNumber(t *testing.T) {
	db := storetest.SQLite(t)
	e := newEnv(t, db)
	erika := login(t, e, "erika", "erika-pass-1234")
	for _, budget := range []string{"NaN", "Inf", "-Inf", "0x1p-2", "zehn", "1,5,0"} {
		for _, step := range []string{"estimate", "start"} {
			form := campaignForm(seo, "1", "1", budget)
			form.Set("step", step)
			res := erika.post("/campaigns", form)
			contains(t, step+" with budget "+budget, res, "„Budget“ muss eine Zahl sein. Es wurde keine Kampagne gestartet.")
			if res.Header.Get("HX-Redirect") != "" || campaignCount(t, db) != 0 {
				t.Fatalf("budget %q (%s) started a campaign: %q", budget, step, res.Header.Get("HX-Redirect"))
			}
		}
	}
}

// The estimate of a campaign over one page speaks of one page, and after
// one earlier tour of the process of that tour: never "1 Seiten" or "der 1
// früheren Touren".
func TestTheEstimateOfOnePageAfterOneEarlierTourSpeaksInTheSingular(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(llmtest.Reply{Content: "Alles gut.", Usage: llm.Usage{PromptTokens: 1000, CompletionTokens: 200}})
		erika := login(t, e, "erika", "erika-pass-1234")
		form := campaignForm(seo, "1", "0", "")
		form.Set("step", "estimate")
		contains(t, "before any tour", erika.post("/campaigns", form),
			"1 Seite × 30.000 Token rein und 2.000 raus pro Tour (ein Vorgabewert: dieser Prozess hat noch keine Tour).")
		form.Set("step", "start")
		m := campaignPath.FindStringSubmatch(erika.post("/campaigns", form).Header.Get("HX-Redirect"))
		if m == nil {
			t.Fatal("the campaign did not start")
		}
		deadline := time.Now().Add(30 * time.Second)
		for e.As(wt.Erika).Must("GET", "/api/campaigns/"+m[1], nil, http.StatusOK).Map(t)["state"] != "done" {
			if time.Now().After(deadline) {
				t.Fatalf("campaign %s never done", m[1])
			}
			time.Sleep(50 * time.Millisecond) // polling the running application
		}
		form.Set("step", "estimate")
		contains(t, "after one tour", erika.post("/campaigns", form),
			"1 Seite × 1.000 Token rein und 200 raus pro Tour (die eine frühere Tour dieses Prozesses).")
	})
}
