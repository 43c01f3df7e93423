package process_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"waymark/internal/agent"
	"waymark/internal/content"
	"waymark/internal/process"
	"waymark/internal/run"
	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestPrepareStartsProcessFromApprovalSnapshot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		k, err := e.skills.Get(context.Background(), seo)
		if err != nil {
			t.Fatal(err)
		}
		tr := e.start(t, erika, seo, page(1, 0))
		pin := skill.Pin{Skill: seo, Source: 1, Digest: k.Digest()}
		want := &agent.Hold{Pin: pin, Section: skill.Section{Pin: pin, Identifier: "seo", Name: "seo skill", Body: seoBody},
			Tools: []string{"read_page"}, Subject: page(1, 0), Skill: "seo", Origin: tr.run.UUID, Admits: true}
		if !reflect.DeepEqual(tr.prepared.Process, want) {
			t.Errorf("Prepare = %+v\nwant %+v", tr.prepared.Process, want)
		}
		// The lineage is stored whole although the run stores nothing else (privacy none).
		got, ok := e.lineage(t, tr.run.UUID)
		wantL := process.Lineage{Configuration: cfgChat, Pin: &pin, Subject: page(1, 0), ProcessSkill: "seo", Origin: tr.run.UUID}
		if !ok || !reflect.DeepEqual(got, wantL) {
			t.Errorf("stored lineage = %+v (%v), want %+v", got, ok, wantL)
		}
	})
}

func TestPrepareWithoutInvocationOrPredecessorHoldsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		tr := e.prepare(t, request{actor: erika, cfg: cfgChat})
		if tr.err != nil || tr.prepared.Process != nil || len(tr.emitted) != 0 {
			t.Errorf("Prepare(ordinary turn) = %+v, %v, emitted %v; want nothing", tr.prepared, tr.err, tr.emitted)
		}
	})
}

// refusalCase fails exactly one start check of a request that otherwise
// passes (erika, chat, seo on page 1 in English).
type refusalCase struct {
	name string
	want process.Refusal
	req  func(t *testing.T, e *env) request
}

func startOf(actor, cfg, k int64, subject *content.Ref) func(*testing.T, *env) request {
	return func(*testing.T, *env) request {
		return request{actor: actor, cfg: cfg, inv: &agent.Invocation{Skill: k, Subject: subject}}
	}
}

var refusalCases = []refusalCase{
	{"configuration for administrators only", process.ConfigurationDenied, startOf(erika, cfgAdmins, seo, page(1, 0))},
	{"configuration unknown or inactive", process.ConfigurationDenied, func(*testing.T, *env) request {
		return request{actor: erika, cfg: cfgChat, inv: &agent.Invocation{Skill: seo, Subject: page(1, 0)}, unknownCfg: true}
	}},
	{"acting user missing", process.ConfigurationDenied, startOf(99, cfgChat, seo, page(1, 0))},
	{"another skill while a process is held", process.ProcessHeld, func(t *testing.T, e *env) request {
		a := e.start(t, erika, seo, page(1, 0))
		e.settle(t, a)
		return request{actor: erika, cfg: cfgChat, inv: &agent.Invocation{Skill: tidy, Subject: page(1, 0)}, pred: a.run.UUID}
	}},
	{"the held skill on another subject", process.ProcessHeld, func(t *testing.T, e *env) request {
		a := e.start(t, erika, seo, page(1, 0))
		e.settle(t, a)
		return request{actor: erika, cfg: cfgChat, inv: &agent.Invocation{Skill: seo, Subject: page(2, 0)}, pred: a.run.UUID}
	}},
	{"skill detached", process.SkillUnavailable, startOf(erika, cfgChat, detached, page(1, 0))},
	{"skill disabled", process.SkillUnavailable, startOf(erika, cfgChat, disabled, page(1, 0))},
	{"skill orphaned", process.SkillUnavailable, func(t *testing.T, e *env) request {
		e.exec(t, "UPDATE skills SET orphaned = TRUE WHERE uid = ?", orphan)
		return request{actor: erika, cfg: cfgChat, inv: &agent.Invocation{Skill: orphan, Subject: page(1, 0)}}
	}},
	{"source below the admission floor", process.SkillUnavailable, startOf(erika, cfgChat, untrusted, page(1, 0))},
	{"source disabled", process.SkillUnavailable, startOf(erika, cfgChat, offSource, page(1, 0))},
	{"skill unknown", process.SkillUnavailable, startOf(erika, cfgChat, 999, page(1, 0))},
	{"plain skill", process.NotAProcess, startOf(erika, cfgChat, voice, page(1, 0))},
	{"edit not approved", process.NotAProcess, func(t *testing.T, e *env) request {
		if _, err := e.skills.Update(context.Background(), skill.UpdateParams{UID: edited, Actor: admin,
			Version: skill.Version{Name: "edited skill", Description: "The edited skill.", Body: "After the edit.",
				AllowedTools: []string{"read_page"}, Process: true}}); err != nil {
			t.Fatal(err)
		}
		return request{actor: erika, cfg: cfgChat, inv: &agent.Invocation{Skill: edited, Subject: page(1, 0)}}
	}},
	{"never approved", process.NotAProcess, startOf(erika, cfgChat, neverApprove, page(1, 0))},
	{"service account", process.ServiceAccount, startOf(robot, cfgChat, seo, page(1, 0))},
	{"four-eyes configuration", process.SecondApproverRequired, startOf(erika, cfgFour, seo, page(1, 0))},
	{"subject table unreadable", process.SubjectDenied, startOf(pete, cfgChat, seo, ce(100, 0))},
	{"subject language not editable", process.SubjectDenied, startOf(lena, cfgChat, seo, page(1, 0))},
	{"subject deleted", process.SubjectDenied, startOf(erika, cfgChat, seo, ce(105, 0))},
	{"subject in a workspace", process.SubjectDenied, startOf(erika, cfgChat, seo, ce(104, 0))},
	{"subject unknown", process.SubjectDenied, startOf(erika, cfgChat, seo, ce(999, 0))},
	{"subject page outside the mount", process.SubjectDenied, startOf(erika, cfgChat, seo, page(20, 0))},
	{"subject page not showable", process.SubjectDenied, startOf(erika, cfgChat, seo, page(3, 0))},
	{"subject on a page outside the mount", process.SubjectDenied, startOf(erika, cfgChat, seo, ce(106, 0))},
	{"translation in another language", process.SubjectDenied, startOf(erika, cfgChat, seo, ce(101, 0))},
	{"default-language record in all languages", process.SubjectDenied, startOf(erika, cfgChat, seo, ce(100, -1))},
	{"root-level record for an editor", process.SubjectDenied, startOf(erika, cfgChat, seo, ce(103, 0))},
	{"pin revoked between start and continuation", process.PinWithdrawn, func(t *testing.T, e *env) request {
		a := e.start(t, erika, revocable, page(1, 0))
		e.settle(t, a)
		if err := e.skills.Revoke(context.Background(), admin, revocable, a.prepared.Process.Pin.Digest); err != nil {
			t.Fatal(err)
		}
		return request{actor: erika, cfg: cfgChat, pred: a.run.UUID}
	}},
}

func TestPrepareRefusesEachFailedCheck(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		for _, c := range refusalCases {
			t.Run(c.name, func(t *testing.T) {
				tr := e.prepare(t, c.req(t, e))
				if got := refusal(tr.err); got != c.want || tr.prepared.Process != nil {
					t.Fatalf("Prepare = %+v, %v; want refusal %s", tr.prepared, tr.err, c.want)
				}
				if tr.err.(agent.Refused).RefusalCase() != string(c.want) {
					t.Errorf("RefusalCase() = %q, want %q", tr.err.(agent.Refused).RefusalCase(), c.want)
				}
			})
		}
	})
}

func TestPrepareReportsTheFirstFailedCheckInSpecOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		// Each step repairs the first failure of the step before; the
		// request keeps failing every later check.
		for _, step := range []struct {
			req  request
			want process.Refusal
		}{
			{request{actor: robot, cfg: cfgAdmins, inv: &agent.Invocation{Skill: disabled, Subject: page(20, 0)}}, process.ConfigurationDenied},
			{request{actor: robot, cfg: cfgFour, inv: &agent.Invocation{Skill: disabled, Subject: page(20, 0)}}, process.SkillUnavailable},
			{request{actor: robot, cfg: cfgFour, inv: &agent.Invocation{Skill: voice, Subject: page(20, 0)}}, process.NotAProcess},
			{request{actor: robot, cfg: cfgFour, inv: &agent.Invocation{Skill: seo, Subject: page(20, 0)}}, process.ServiceAccount},
			{request{actor: erika, cfg: cfgFour, inv: &agent.Invocation{Skill: seo, Subject: page(20, 0)}}, process.SecondApproverRequired},
			{request{actor: erika, cfg: cfgChat, inv: &agent.Invocation{Skill: seo, Subject: page(20, 0)}}, process.SubjectDenied},
		} {
			if got := refusal(e.prepare(t, step.req).err); got != step.want {
				t.Errorf("Prepare(%+v) refused %q, want %q", step.req, got, step.want)
			}
		}
		// The continuation checks (b) and (c) sit between (a) and (d).
		held := e.start(t, erika, seo, page(1, 0))
		e.settle(t, held)
		waiting := e.start(t, erika, seo, page(1, 0))
		if won, err := e.runs.Suspend(context.Background(), waiting.run.UUID,
			run.Suspension{Owner: waiting.run.LeaseOwner, To: run.StatusWaitingForApproval, State: []byte(`{}`)}); err != nil || !won {
			t.Fatalf("suspend = %v, %v", won, err)
		}
		broken := e.prepare(t, request{actor: erika, cfg: cfgChat})
		e.settle(t, broken)
		if _, err := e.runs.AppendEvent(context.Background(), broken.run.UUID, run.EventLineage, map[string]any{"pin": "x"}, run.PrivacyFull); err != nil {
			t.Fatal(err)
		}
		for _, step := range []struct {
			name string
			req  request
			want process.Refusal
		}{
			{"(a) before (b)", request{actor: erika, cfg: cfgAdmins, pred: broken.run.UUID, inv: &agent.Invocation{Skill: disabled}}, process.ConfigurationDenied},
			{"(b) unreadable before (c)", request{actor: erika, cfg: cfgChat, pred: broken.run.UUID, inv: &agent.Invocation{Skill: disabled}}, process.LineageUnreadable},
			{"(b) unfinished before (c)", request{actor: erika, cfg: cfgChat, pred: waiting.run.UUID, inv: &agent.Invocation{Skill: disabled}}, process.PredecessorNotFinished},
			{"(c) before (d) and (f)", request{actor: erika, cfg: cfgFour, pred: held.run.UUID, inv: &agent.Invocation{Skill: disabled}}, process.ProcessHeld},
			{"a continuation passes (d) and (e) and stops at (f)", request{actor: erika, cfg: cfgFour, pred: held.run.UUID}, process.SecondApproverRequired},
		} {
			if got := refusal(e.prepare(t, step.req).err); got != step.want {
				t.Errorf("%s: Prepare refused %q, want %q", step.name, got, step.want)
			}
		}
	})
}

func TestPrepareSeesDemotionBetweenTwoCalls(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		// The root-level record is for administrators only.
		if tr := e.prepare(t, request{actor: admin, cfg: cfgChat, inv: &agent.Invocation{Skill: seo, Subject: ce(103, 0)}}); tr.err != nil {
			t.Fatalf("Prepare(admin) = %v", tr.err)
		}
		e.exec(t, `UPDATE be_users SET admin = FALSE, group_uids = '[1]' WHERE uid = ?`, admin)
		if got := refusal(e.prepare(t, request{actor: admin, cfg: cfgChat, inv: &agent.Invocation{Skill: seo, Subject: ce(103, 0)}}).err); got != process.SubjectDenied {
			t.Errorf("Prepare(demoted admin) refused %q, want subject_denied", got)
		}
		// Removed from the group that may use the configuration.
		if tr := e.prepare(t, request{actor: erika, cfg: cfgChat, inv: &agent.Invocation{Skill: seo, Subject: page(1, 0)}}); tr.err != nil {
			t.Fatalf("Prepare(erika) = %v", tr.err)
		}
		e.exec(t, `UPDATE be_users SET group_uids = '[]' WHERE uid = ?`, erika)
		if got := refusal(e.prepare(t, request{actor: erika, cfg: cfgChat, inv: &agent.Invocation{Skill: seo, Subject: page(1, 0)}}).err); got != process.ConfigurationDenied {
			t.Errorf("Prepare(erika out of her group) refused %q, want configuration_denied", got)
		}
		// A disabled user grants nothing.
		e.exec(t, `UPDATE be_users SET disabled = TRUE WHERE uid = ?`, otto)
		if got := refusal(e.prepare(t, request{actor: otto, cfg: cfgChat, inv: &agent.Invocation{Skill: seo}}).err); got != process.ConfigurationDenied {
			t.Errorf("Prepare(disabled otto) refused %q, want configuration_denied", got)
		}
	})
}

func TestPrepareAcceptsSubjectsTheActorMayWorkOn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		for _, c := range []struct {
			name    string
			actor   int64
			subject *content.Ref
		}{
			{"a page in the mount", erika, page(2, 0)},
			{"a translated page in its language", erika, page(11, 1)},
			{"a translation in its own language", erika, ce(101, 1)},
			{"a default-language record in German", erika, ce(100, 1)},
			{"an all-languages record in German", erika, ce(102, 1)},
			{"an all-languages record in all languages", erika, ce(102, -1)},
			{"a German translation for a German editor", lena, ce(101, 1)},
			{"a root-level record for an administrator", admin, ce(103, 0)},
			{"a page outside every mount for an administrator", admin, page(20, 0)},
			{"no subject", erika, nil},
		} {
			tr := e.prepare(t, request{actor: c.actor, cfg: cfgChat, inv: &agent.Invocation{Skill: seo, Subject: c.subject}})
			if tr.err != nil || tr.prepared.Process == nil || !reflect.DeepEqual(tr.prepared.Process.Subject, c.subject) {
				t.Errorf("%s: Prepare = %+v, %v; want a process on %v", c.name, tr.prepared.Process, tr.err, c.subject)
			}
		}
		ok, err := e.prep.SubjectAllowed(context.Background(), lena, *ce(100, 0))
		if err != nil || ok {
			t.Errorf("SubjectAllowed(lena, English record) = %v, %v; want false", ok, err)
		}
		ok, err = e.prep.SubjectAllowed(context.Background(), 99, *page(1, 0))
		if err != nil || ok {
			t.Errorf("SubjectAllowed(missing user) = %v, %v; want false", ok, err)
		}
	})
}

func TestStartRefusalRecordsNoLineage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		tr := e.prepare(t, request{actor: erika, cfg: cfgChat, inv: &agent.Invocation{Skill: voice}})
		if refusal(tr.err) != process.NotAProcess {
			t.Fatalf("Prepare = %v, want not_a_process", tr.err)
		}
		if l, ok := e.lineage(t, tr.run.UUID); ok {
			t.Errorf("a refused start stored lineage %+v, want none", l)
		}
	})
}

func TestLineageIsStoredAtEveryPrivacyLevel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		a := e.start(t, erika, seo, page(1, 0))
		want, _ := e.lineage(t, a.run.UUID)
		for _, p := range []run.Privacy{run.PrivacyNone, run.PrivacyMetadata, run.PrivacyRedacted, run.PrivacyFull} {
			if _, err := e.runs.AppendEvent(context.Background(), a.run.UUID, run.EventLineage, want, p); err != nil {
				t.Fatal(err)
			}
			got, ok := e.lineage(t, a.run.UUID)
			if !ok || !reflect.DeepEqual(got, want) {
				b, _ := json.Marshal(got)
				t.Errorf("lineage stored at %s reads %s, want %+v", p, b, want)
			}
		}
	})
}
