package process_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"waymark/internal/agent"
	"waymark/internal/process"
	"waymark/internal/run"
	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// sent records that the run sent provider calls.
func (e *env) sent(t *testing.T, tr *turn, calls int) {
	t.Helper()
	err := e.db.InTx(context.Background(), func(tx *store.Tx) error {
		return e.runs.FlushTx(context.Background(), tx, tr.run.UUID, run.Flush{Usage: run.Usage{Iterations: calls}, Privacy: run.PrivacyNone})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) suspend(t *testing.T, tr *turn) {
	t.Helper()
	if won, err := e.runs.Suspend(context.Background(), tr.run.UUID, run.Suspension{Owner: tr.run.LeaseOwner, To: run.StatusWaitingForApproval, State: []byte(`{}`)}); err != nil || !won {
		t.Fatalf("suspend %s = %v, %v", tr.run.UUID, won, err)
	}
}

func (e *env) events(t *testing.T, id string) []run.Event {
	t.Helper()
	evs, err := e.runs.Events(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestContinuationKeepsApprovedTextAndToolsAfterAnEdit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		a := e.start(t, erika, seo, page(1, 0))
		e.sent(t, a, 2)
		e.settle(t, a)
		if _, err := e.skills.Update(context.Background(), skill.UpdateParams{UID: seo, Actor: admin,
			Version: skill.Version{Name: "seo skill", Description: "The seo skill.", Body: "Edited.", Process: true,
				AllowedTools: []string{"read_page", "read_record"}}}); err != nil {
			t.Fatal(err)
		}
		b := e.cont(t, erika, a.run.UUID)
		want := *a.prepared.Process
		want.Admits = false // the conversation already holds the section
		if b.err != nil || !reflect.DeepEqual(b.prepared.Process, &want) {
			t.Fatalf("continuation = %+v, %v\nwant %+v", b.prepared.Process, b.err, want)
		}
		l, _ := e.lineage(t, b.run.UUID)
		wantL := process.Lineage{Configuration: cfgChat, Pin: &want.Pin, Subject: page(1, 0), ProcessSkill: "seo",
			Origin: a.run.UUID, Predecessor: a.run.UUID}
		if !reflect.DeepEqual(l, wantL) {
			t.Errorf("continuation lineage = %+v, want %+v", l, wantL)
		}
		e.settle(t, b)
		// The same invocation again, naming no other subject, continues the held process.
		c := e.prepare(t, request{actor: erika, cfg: cfgChat, pred: b.run.UUID, inv: &agent.Invocation{Skill: seo, Subject: page(1, 0)}})
		if c.err != nil || c.prepared.Process == nil || c.prepared.Process.Origin != a.run.UUID || c.prepared.Process.Section.Body != seoBody {
			t.Errorf("re-invocation while held = %+v, %v; want the process of origin %s", c.prepared.Process, c.err, a.run.UUID)
		}
	})
}

func TestContinuationAdmitsProcessWhosePredecessorNeverSent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		a := e.start(t, erika, seo, page(1, 0))
		e.settle(t, a) // no provider call: the window refused it, say
		b := e.cont(t, erika, a.run.UUID)
		if b.err != nil || b.prepared.Process == nil || !b.prepared.Process.Admits {
			t.Fatalf("continuation of a run that never sent = %+v, %v; want admitted", b.prepared.Process, b.err)
		}
		e.sent(t, b, 1)
		e.settle(t, b)
		if c := e.cont(t, erika, b.run.UUID); c.err != nil || c.prepared.Process == nil || c.prepared.Process.Admits {
			t.Errorf("continuation of a run that sent = %+v, %v; want not admitted again", c.prepared.Process, c.err)
		}
	})
}

func TestGonePredecessorAnswersAlikeAndLetsProcessGo(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		foreign := e.start(t, otto, seo, page(1, 0))
		e.settle(t, foreign)
		unknown := e.cont(t, erika, uuid.NewString())
		other := e.cont(t, erika, foreign.run.UUID)
		notice := []emitted{{run.EventNotice, map[string]any{"kind": "dropped_source", "reason": "predecessor_gone", "uid": 0}}}
		for name, tr := range map[string]*turn{"unknown uuid": unknown, "another user's run": other} {
			if tr.err != nil || tr.prepared.Process != nil || !reflect.DeepEqual(tr.emitted, notice) {
				t.Errorf("%s: Prepare = %+v, %v, emitted %+v; want no process and only %+v", name, tr.prepared, tr.err, tr.emitted, notice)
			}
		}
		// An administrator may continue it.
		if tr := e.cont(t, admin, foreign.run.UUID); tr.err != nil || tr.prepared.Process == nil {
			t.Errorf("admin continuation = %+v, %v; want the process", tr.prepared, tr.err)
		}
		// An invocation with a gone predecessor starts anew as its own origin.
		tr := e.prepare(t, request{actor: erika, cfg: cfgChat, pred: foreign.run.UUID, inv: &agent.Invocation{Skill: tidy}})
		if tr.err != nil || tr.prepared.Process == nil || tr.prepared.Process.Origin != tr.run.UUID || tr.prepared.Process.Skill != "tidy" {
			t.Errorf("invocation after a gone predecessor = %+v, %v; want a new start", tr.prepared.Process, tr.err)
		}
	})
}

func TestUnfinishedPredecessorHoldingProcessRefusesUntilItEnds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		a := e.start(t, erika, seo, page(1, 0))
		e.sent(t, a, 1)
		e.suspend(t, a) // waits for a decision
		b := e.cont(t, erika, a.run.UUID)
		if refusal(b.err) != process.PredecessorNotFinished {
			t.Fatalf("continuation of a waiting run = %v, want predecessor_not_finished", b.err)
		}
		carried := *a.prepared.Process
		wantB := process.Lineage{Configuration: cfgChat, Pin: &carried.Pin, Subject: page(1, 0), ProcessSkill: "seo",
			Origin: a.run.UUID, Predecessor: a.run.UUID, CarriedFrom: a.run.UUID}
		if l, _ := e.lineage(t, b.run.UUID); !reflect.DeepEqual(l, wantB) {
			t.Errorf("refused lineage = %+v, want %+v", l, wantB)
		}
		e.settle(t, b)
		// A turn naming the refused run is checked at the last run that ran.
		c := e.cont(t, erika, b.run.UUID)
		if refusal(c.err) != process.PredecessorNotFinished {
			t.Fatalf("continuation of the refused run = %v, want predecessor_not_finished", c.err)
		}
		if l, _ := e.lineage(t, c.run.UUID); l.CarriedFrom != b.run.UUID || l.Pin == nil {
			t.Errorf("second refused lineage = %+v, want the pin carried from %s", l, b.run.UUID)
		}
		e.settle(t, c)
		// Another skill is refused at that run too.
		if d := e.prepare(t, request{actor: erika, cfg: cfgChat, pred: c.run.UUID, inv: &agent.Invocation{Skill: tidy}}); refusal(d.err) != process.PredecessorNotFinished {
			t.Errorf("invocation after the refused runs = %v, want predecessor_not_finished", d.err)
		}
		// Once the waiting run is finished, the chain hands the process on.
		if won, err := e.runs.CancelIfWaiting(context.Background(), a.run.UUID); err != nil || !won {
			t.Fatalf("cancel = %v, %v", won, err)
		}
		if d := e.prepare(t, request{actor: erika, cfg: cfgChat, pred: c.run.UUID, inv: &agent.Invocation{Skill: tidy}}); refusal(d.err) != process.ProcessHeld {
			t.Errorf("another skill after the refused runs = %v, want process_held", d.err)
		}
		d := e.cont(t, erika, c.run.UUID)
		if d.err != nil || d.prepared.Process == nil || d.prepared.Process.Origin != a.run.UUID || d.prepared.Process.Admits {
			t.Fatalf("continuation after the end of the wait = %+v, %v; want the process of %s, not admitted again", d.prepared.Process, d.err, a.run.UUID)
		}
		if l, _ := e.lineage(t, d.run.UUID); l.Predecessor != c.run.UUID || l.CarriedFrom != "" || l.Origin != a.run.UUID {
			t.Errorf("lineage after the chain = %+v", l)
		}
	})
}

func TestRefusedRunPassedOnTheWayMustBeFinished(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		a := e.start(t, erika, seo, page(1, 0))
		e.settle(t, a)
		// A refused run whose settle a store error undid: its lineage is
		// stored, the run is running again.
		b := e.prepare(t, request{actor: erika, cfg: cfgAdmins, pred: a.run.UUID})
		if refusal(b.err) != process.ConfigurationDenied {
			t.Fatalf("Prepare = %v, want configuration_denied", b.err)
		}
		if l, _ := e.lineage(t, b.run.UUID); l.Pin != nil || l.Predecessor != a.run.UUID || l.CarriedFrom != "" {
			t.Fatalf("lineage of a refusal before reading = %+v, want one without pin naming %s", l, a.run.UUID)
		}
		e.settle(t, b)
		e.exec(t, `UPDATE runs SET status = 'running', error_class = '', finished_at = 0 WHERE uuid = ?`, b.run.UUID)
		if c := e.cont(t, erika, b.run.UUID); c.err != nil || c.prepared.Process != nil {
			t.Errorf("continuation of a running run with a pinless lineage = %+v, %v; want no process (it ran)", c.prepared, c.err)
		}
		e.exec(t, `UPDATE runs SET status = 'queued', error_class = ? WHERE uuid = ?`, process.RefusedClass, b.run.UUID)
		if c := e.cont(t, erika, b.run.UUID); refusal(c.err) != process.PredecessorNotFinished {
			t.Errorf("continuation through a refused run not finished = %v, want predecessor_not_finished", c.err)
		}
	})
}

func TestMoreThan32PinlessRefusalsLetProcessGo(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		a := e.start(t, erika, seo, page(1, 0))
		e.settle(t, a)
		pred := a.run.UUID
		for i := 1; i <= process.MaxPinlessRefusals+1; i++ {
			r := e.prepare(t, request{actor: erika, cfg: cfgAdmins, pred: pred}) // refused before reading
			if refusal(r.err) != process.ConfigurationDenied {
				t.Fatalf("refusal %d = %v", i, r.err)
			}
			e.settle(t, r)
			pred = r.run.UUID
			if i == process.MaxPinlessRefusals {
				if c := e.cont(t, erika, pred); c.err != nil || c.prepared.Process == nil || c.prepared.Process.Origin != a.run.UUID {
					t.Fatalf("continuation after %d refusals = %+v, %v; want the process", i, c.prepared, c.err)
				}
			}
		}
		c := e.cont(t, erika, pred)
		notice := []emitted{{run.EventNotice, map[string]any{"kind": "dropped_source", "reason": "refused_too_often", "uid": 0}}}
		if c.err != nil || c.prepared.Process != nil || !reflect.DeepEqual(c.emitted, notice) {
			t.Errorf("continuation after %d refusals = %+v, %v, emitted %+v; want no process and %+v",
				process.MaxPinlessRefusals+1, c.prepared, c.err, c.emitted, notice)
		}
	})
}

func TestPinWithdrawnLetsProcessGo(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		a := e.start(t, erika, revocable, page(1, 0))
		e.settle(t, a)
		if err := e.skills.Revoke(context.Background(), admin, revocable, a.prepared.Process.Pin.Digest); err != nil {
			t.Fatal(err)
		}
		b := e.cont(t, erika, a.run.UUID)
		if refusal(b.err) != process.PinWithdrawn {
			t.Fatalf("continuation = %v, want pin_withdrawn", b.err)
		}
		if l, ok := e.lineage(t, b.run.UUID); !ok || l.Pin != nil || !l.Released || l.Predecessor != a.run.UUID {
			t.Errorf("lineage of pin_withdrawn = %+v, %v; want one without pin, released, naming %s", l, ok, a.run.UUID)
		}
		e.settle(t, b)
		c := e.cont(t, erika, b.run.UUID)
		if c.err != nil || c.prepared.Process != nil || len(c.emitted) != 0 {
			t.Errorf("next turn = %+v, %v, emitted %v; want it to go on without the process", c.prepared, c.err, c.emitted)
		}
	})
}

// LC2: a disabled pinned process ends the tour at a continuation as on
// resume: pin_withdrawn, a released lineage without the pin, and after
// re-enabling the next turn holds no process. (Before the fix the
// continuation was refused skill_unavailable and kept the pin.)
func TestDisabledPinnedProcessEndsTheTourAtAContinuation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		ctx := context.Background()
		a := e.start(t, erika, switchable, page(1, 0))
		e.settle(t, a)
		if err := e.skills.SetEnabled(ctx, admin, switchable, false); err != nil {
			t.Fatal(err)
		}
		b := e.cont(t, erika, a.run.UUID)
		if refusal(b.err) != process.PinWithdrawn {
			t.Fatalf("continuation of a disabled process = %v, want pin_withdrawn", b.err)
		}
		if l, ok := e.lineage(t, b.run.UUID); !ok || l.Pin != nil || !l.Released || l.Predecessor != a.run.UUID {
			t.Errorf("refused lineage = %+v, %v; want one without pin, released, naming %s", l, ok, a.run.UUID)
		}
		e.settle(t, b)
		if err := e.skills.SetEnabled(ctx, admin, switchable, true); err != nil {
			t.Fatal(err)
		}
		if c := e.cont(t, erika, b.run.UUID); c.err != nil || c.prepared.Process != nil {
			t.Errorf("continuation after re-enabling = %+v, %v; want no process", c.prepared, c.err)
		}
	})
}

// A skill the configuration no longer attaches is not a withdrawn pin: the
// continuation is refused skill_unavailable and keeps the process (item 4),
// so the tour goes on once the skill is attached again.
func TestDetachedPinnedProcessRefusesTheContinuationAndKeepsIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		a := e.start(t, erika, switchable, page(1, 0))
		e.settle(t, a)
		e.exec(t, `DELETE FROM skill_attachments WHERE skill_uid = ? AND configuration_uid = ?`, switchable, cfgChat)
		b := e.cont(t, erika, a.run.UUID)
		if refusal(b.err) != process.SkillUnavailable {
			t.Fatalf("continuation of a detached process = %v, want skill_unavailable", b.err)
		}
		if l, _ := e.lineage(t, b.run.UUID); l.Pin == nil || l.CarriedFrom != a.run.UUID {
			t.Errorf("refused lineage = %+v, want the pin carried from %s", l, a.run.UUID)
		}
	})
}

func TestContinuedProcessOnConfigurationTurnedFourEyes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		a := e.start(t, erika, seo, page(1, 0))
		e.settle(t, a)
		e.exec(t, `UPDATE configurations SET require_second_approver = TRUE WHERE uid = ?`, cfgChat)
		b := e.cont(t, erika, a.run.UUID)
		var ref *process.RefusedError
		if !errors.As(b.err, &ref) || ref.Case != process.SecondApproverRequired || !ref.ApprovalDenied {
			t.Errorf("continuation = %#v, want second_approver_required settled approval_denied", b.err)
		}
		start := e.prepare(t, request{actor: erika, cfg: cfgFour, inv: &agent.Invocation{Skill: seo}})
		if !errors.As(start.err, &ref) || ref.Case != process.SecondApproverRequired || ref.ApprovalDenied {
			t.Errorf("start = %#v, want second_approver_required settled policy_denied", start.err)
		}
	})
}

func TestUnreadableLineageRefusesContinuation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		a := e.start(t, erika, seo, page(1, 0))
		e.settle(t, a)
		if _, err := e.runs.AppendEvent(context.Background(), a.run.UUID, run.EventLineage, map[string]any{"origin": 7}, run.PrivacyFull); err != nil {
			t.Fatal(err)
		}
		b := e.cont(t, erika, a.run.UUID)
		if refusal(b.err) != process.LineageUnreadable {
			t.Fatalf("continuation = %v, want lineage_unreadable", b.err)
		}
		if l, _ := e.lineage(t, b.run.UUID); l.Pin != nil || l.Predecessor != a.run.UUID {
			t.Errorf("refused lineage = %+v, want one without pin naming %s", l, a.run.UUID)
		}
		if _, err := e.prep.Holds(context.Background(), a.run.UUID); !errors.Is(err, process.ErrUnreadable) {
			t.Errorf("Holds(unreadable origin) = %v, want ErrUnreadable", err)
		}
		if err := e.prep.Release(context.Background(), a.run.UUID); !errors.Is(err, process.ErrUnreadable) {
			t.Errorf("Release(unreadable) = %v, want ErrUnreadable", err)
		}
	})
}

func TestReleaseEndsProcessForEveryTurn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		ctx := context.Background()
		a := e.start(t, erika, seo, page(1, 0))
		e.settle(t, a)
		b := e.cont(t, erika, a.run.UUID)
		e.settle(t, b)
		if ok, err := e.prep.Holds(ctx, a.run.UUID); err != nil || !ok {
			t.Fatalf("Holds(origin) = %v, %v; want true", ok, err)
		}
		if err := e.prep.Release(ctx, a.run.UUID); err != nil {
			t.Fatal(err)
		}
		if ok, err := e.prep.Holds(ctx, a.run.UUID); err != nil || ok {
			t.Errorf("Holds(released origin) = %v, %v; want false", ok, err)
		}
		if l, _ := e.lineage(t, a.run.UUID); !l.Released || l.Pin == nil {
			t.Errorf("origin lineage after Release = %+v, want released with its pin", l)
		}
		// Release again, and of a run without a process, changes nothing.
		n := len(e.events(t, a.run.UUID))
		if err := e.prep.Release(ctx, a.run.UUID); err != nil || len(e.events(t, a.run.UUID)) != n {
			t.Errorf("second Release = %v, events %d → %d", err, n, len(e.events(t, a.run.UUID)))
		}
		plain := e.prepare(t, request{actor: erika, cfg: cfgChat})
		if err := e.prep.Release(ctx, plain.run.UUID); err != nil || len(e.events(t, plain.run.UUID)) != 0 {
			t.Errorf("Release(no process) = %v, events %d", err, len(e.events(t, plain.run.UUID)))
		}
		if err := e.prep.Release(ctx, uuid.NewString()); err != nil {
			t.Errorf("Release(unknown run) = %v", err)
		}
		// A later turn of b hands on nothing, though b itself was never released.
		c := e.cont(t, erika, b.run.UUID)
		if c.err != nil || c.prepared.Process != nil || len(c.emitted) != 0 {
			t.Errorf("continuation after the end = %+v, %v, emitted %v; want no process", c.prepared, c.err, c.emitted)
		}
		// Sending the invocation again starts the process anew as its own origin.
		d := e.prepare(t, request{actor: erika, cfg: cfgChat, pred: b.run.UUID, inv: &agent.Invocation{Skill: seo, Subject: page(1, 0)}})
		if d.err != nil || d.prepared.Process == nil || d.prepared.Process.Origin != d.run.UUID || !d.prepared.Process.Admits {
			t.Errorf("invocation after the end = %+v, %v; want a new start", d.prepared.Process, d.err)
		}
		if l, _ := e.lineage(t, d.run.UUID); l.Origin != d.run.UUID || l.Predecessor != b.run.UUID {
			t.Errorf("lineage of the new start = %+v", l)
		}
	})
}

func TestProcessEndedThroughRefusedRunIsNotHandedOn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		ctx := context.Background()
		a := e.start(t, erika, seo, page(1, 0))
		e.settle(t, a)
		e.exec(t, `UPDATE configurations SET require_second_approver = TRUE WHERE uid = ?`, cfgChat)
		b := e.cont(t, erika, a.run.UUID) // refused, carries the lineage on
		e.settle(t, b)
		e.exec(t, `UPDATE configurations SET require_second_approver = FALSE WHERE uid = ?`, cfgChat)
		if ok, err := e.prep.Holds(ctx, b.run.UUID); err != nil || !ok {
			t.Fatalf("Holds(refused run that carried) = %v, %v; want true", ok, err)
		}
		// The actor may not end the origin: the named run alone lets go.
		if err := e.prep.Release(ctx, b.run.UUID); err != nil {
			t.Fatal(err)
		}
		if c := e.cont(t, erika, b.run.UUID); c.err != nil || c.prepared.Process != nil {
			t.Errorf("continuation of a released refused run = %+v, %v; want no process", c.prepared, c.err)
		}
		if c := e.cont(t, erika, a.run.UUID); c.err != nil || c.prepared.Process == nil {
			t.Errorf("continuation of the unreleased origin = %+v, %v; want the process", c.prepared, c.err)
		}
	})
}

func TestStoreErrorIsRetriedNotRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		a := e.start(t, erika, seo, page(1, 0))
		e.settle(t, a)
		e.exec(t, `ALTER TABLE skill_approvals RENAME TO skill_approvals_away`)
		for name, req := range map[string]request{
			"start":        {actor: erika, cfg: cfgChat, inv: &agent.Invocation{Skill: seo, Subject: page(1, 0)}},
			"continuation": {actor: erika, cfg: cfgChat, pred: a.run.UUID},
		} {
			tr := e.prepare(t, req)
			var refused agent.Refused
			if tr.err == nil || errors.As(tr.err, &refused) || len(tr.emitted) != 0 {
				t.Errorf("%s with approvals unreadable = %v (emitted %v); want a plain error and nothing recorded", name, tr.err, tr.emitted)
			}
		}
	})
}

func TestOriginThatNoLongerExistsEndsProcess(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db)
		a := e.start(t, erika, seo, page(1, 0))
		e.settle(t, a)
		b := e.cont(t, erika, a.run.UUID)
		e.settle(t, b)
		e.exec(t, `DELETE FROM run_events WHERE run_uuid = ?`, a.run.UUID) // retention purged the origin
		e.exec(t, `DELETE FROM runs WHERE uuid = ?`, a.run.UUID)
		if ok, err := e.prep.Holds(context.Background(), a.run.UUID); err != nil || ok {
			t.Errorf("Holds(purged origin) = %v, %v; want false", ok, err)
		}
		if c := e.cont(t, erika, b.run.UUID); c.err != nil || c.prepared.Process != nil {
			t.Errorf("continuation with a purged origin = %+v, %v; want no process", c.prepared, c.err)
		}
	})
}

func TestRefusedClassMatchesTheRuntime(t *testing.T) {
	if process.RefusedClass != "process_invocation_refused" {
		t.Errorf("RefusedClass = %q", process.RefusedClass)
	}
}

// L4.9: a running turn that has no lineage yet (between its row and its
// preparation) and whose opening request names a predecessor or an
// invocation has not decided its process: a continuation naming it is
// refused predecessor_not_finished. A running ordinary turn hands on nothing,
// and one whose opening request cannot tell (no opening event) fails closed.
func TestContinuationOfARunningTurnThatHasNotDecidedItsProcess(t *testing.T) {
	cases := []struct {
		name    string
		opening map[string]any // nil: no opening event
		want    process.Refusal
	}{
		{"asked to continue", map[string]any{"messageCount": 1, "predecessor": "some-run"}, process.PredecessorNotFinished},
		{"asked to invoke", map[string]any{"messageCount": 1, "predecessor": "", "skill": seo}, process.PredecessorNotFinished},
		{"an ordinary turn", map[string]any{"messageCount": 1, "predecessor": ""}, ""},
		{"no opening event", nil, process.PredecessorNotFinished},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := setup(t, db)
				ctx := context.Background()
				id := uuid.NewString()
				if err := e.runs.Create(ctx, run.Run{UUID: id, Configuration: cfgChat, Initiator: erika, Status: run.StatusRunning,
					LeaseOwner: "seg-" + id, LeaseExpiresAt: e.clk.Now().Add(time.Minute)}); err != nil {
					t.Fatal(err)
				}
				if c.opening != nil {
					if _, err := e.runs.AppendEvent(ctx, id, run.EventRequest, c.opening, run.PrivacyMetadata); err != nil {
						t.Fatal(err)
					}
				}
				b := e.cont(t, erika, id)
				if got := refusal(b.err); got != c.want || (c.want == "" && b.err != nil) {
					t.Fatalf("continuation of a running turn = %v, want refusal %q", b.err, c.want)
				}
				if c.want == "" {
					return
				}
				if l, ok := e.lineage(t, b.run.UUID); !ok || l.Pin != nil || l.Predecessor != id {
					t.Errorf("lineage of the refusal = %+v, %v; want one without pin naming %s", l, ok, id)
				}
			})
		})
	}
}
