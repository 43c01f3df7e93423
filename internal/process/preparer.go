package process

import (
	"context"
	"errors"
	"fmt"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/content"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/skill"
	"waymark/internal/store"
)

// RefusedClass is the error class the runtime settles a refused run with
// (agent.Runtime.refuse). A continuation follows the lineage of a run
// settled with it back to the last run that ran (ADR-228 item 4).
const RefusedClass = "process_invocation_refused"

// Preparer runs the start checks of guided processes and derives a run's
// process from its invocation or its predecessor (ADR-228 items 2–4, 9). It
// implements agent.Preparer. It is safe for concurrent use: every call reads
// the store as it is now.
type Preparer struct {
	db       *store.DB
	src      content.Source
	dir      access.Directory
	runs     *run.Store
	skills   *skill.Store
	checker  *access.Checker
	lineages *Store
}

var (
	_ agent.Preparer      = (*Preparer)(nil)
	_ agent.LineageViewer = (*Preparer)(nil)
)

// NewPreparer returns a preparer reading runs, their lineage events, skills
// and content through the given stores, the records of src and the users
// of dir (nil: the built-in source and directory); every other argument is
// required.
func NewPreparer(db *store.DB, src content.Source, dir access.Directory, runs *run.Store, skills *skill.Store, checker *access.Checker) *Preparer {
	return &Preparer{db: db, src: content.OrBuiltin(src), dir: access.OrBuiltin(dir), runs: runs, skills: skills, checker: checker, lineages: NewStore(runs)}
}

// knowledge is what a preparation knows about the predecessor's process.
type knowledge int

const (
	unread knowledge = iota // not read (yet), or it could not be read
	none                    // the predecessor hands on no process
	held                    // carried is the process the predecessor hands on
)

// attempt is one Prepare call.
type attempt struct {
	*Preparer
	prep    agent.Preparation
	emit    func(run.Kind, any)
	actor   *access.Actor // nil: the acting user is missing (grants nothing)
	know    knowledge
	carried Lineage // the lineage of the last run that ran, when know == held
	lastRan run.Run // that run, when know == held
}

// Prepare runs the start checks of ADR-228 item 2 in the spec's order for a
// run that names an invocation or a predecessor (anything else has nothing
// to prepare), reading the acting user — the run's initiator — as stored
// now:
//
//	(a) the actor may use the configuration (configuration_denied);
//	(b) a continuation's lineage can be read (lineage_unreadable) and a
//	    predecessor holding a process is terminal (predecessor_not_finished);
//	(c) no invocation of another skill (or another subject) while a process
//	    is held (process_held);
//	(d) the skill is attached, enabled, not orphaned and its source enabled
//	    and admitted (skill_unavailable) — for a continuation too, where a
//	    disabled, orphaned or gone record or a withdrawn source is a
//	    withdrawn pin (pin_withdrawn, LC2);
//	(e) a start's current version is an approved instruction marked a
//	    process (not_a_process);
//	(f) the actor is no service account (service_account) and the
//	    configuration does not require a second approver
//	    (second_approver_required; approval_denied for a continued process);
//	(g) the actor may work on the subject record (subject_denied);
//	(h) the derived pin still holds (pin_withdrawn).
//
// A refusal is a *RefusedError. A refused continuation records through emit
// the lineage it would have carried (carriedFrom its predecessor), a lineage
// without a pin naming its predecessor when it had not read one, and none
// when the predecessor held no process; pin_withdrawn records a released
// lineage without a pin, so the next turn goes on without the process. A
// predecessor that is gone, and more than 32 refusals in a row that could
// not read the process, let the process go with a dropped_source notice.
// A run whose stored request cannot be decoded is refused request_unreadable
// before any check, recording a lineage without a pin that names the
// predecessor its opening request event names.
// On success the run's lineage is emitted and the held process returned.
// A failed store read is a plain error: the runtime retries a queued run.
func (p *Preparer) Prepare(ctx context.Context, prep agent.Preparation, emit func(kind run.Kind, payload any)) (agent.Prepared, error) {
	if prep.Invocation == nil && prep.Predecessor == "" && !prep.RequestUnreadable {
		return agent.Prepared{}, nil
	}
	a := &attempt{Preparer: p, prep: prep, emit: emit}
	if prep.RequestUnreadable {
		// Nothing was read of the predecessor: the refusal records a lineage
		// without a pin naming it (item 4), so the process is not lost.
		return agent.Prepared{}, a.refuse(RequestUnreadable, false, "")
	}
	h, err := a.prepare(ctx)
	if err != nil {
		return agent.Prepared{}, err
	}
	return agent.Prepared{Process: h}, nil
}

func (a *attempt) prepare(ctx context.Context) (*agent.Hold, error) {
	actor, err := access.LoadActor(ctx, a.dir, a.db, a.prep.Run.Initiator)
	switch {
	case errors.Is(err, access.ErrNoUser):
	case err != nil:
		return nil, fmt.Errorf("acting user %d: %w", a.prep.Run.Initiator, err)
	default:
		a.actor = actor
	}
	// (a) The configuration; a missing or disabled user may use none.
	if !a.prep.ConfigFound || !llmconfig.MayUse(a.actor, a.prep.Config) {
		return nil, a.refuse(ConfigurationDenied, false, "")
	}
	// (b) The predecessor's lineage.
	a.know = none
	if a.prep.Predecessor != "" {
		a.know = unread
		if err := a.derive(ctx); err != nil {
			return nil, err
		}
	}
	inv := a.prep.Invocation
	cont := a.know == held
	// (c) Another process while one is held. The same skill on the same
	// subject (or naming none) continues the held process.
	if cont && inv != nil && (inv.Skill != a.carried.Pin.Skill || (inv.Subject != nil && !sameRef(inv.Subject, a.carried.Subject))) {
		return nil, a.refuse(ProcessHeld, false, fmt.Sprintf("skill %d holds the conversation", a.carried.Pin.Skill))
	}
	if !cont && inv == nil {
		return nil, nil // a continuation that hands on no process
	}
	l := Lineage{Configuration: a.prep.Run.Configuration, Predecessor: a.prep.Predecessor}
	var skillUID int64
	if cont {
		pin := *a.carried.Pin
		l.Pin, l.Subject, l.ProcessSkill, l.Origin = &pin, a.carried.Subject, a.carried.ProcessSkill, a.carried.Origin
		skillUID = pin.Skill
	} else {
		l.Subject, l.Origin = inv.Subject, a.prep.Run.UUID
		skillUID = inv.Skill
	}
	// (d) The skill is available on the configuration. For a continuation, a
	// pinned record that is disabled, orphaned, gone or whose source no
	// longer instructs is a withdrawn pin, as the pin check on resume treats
	// it (LC2): the tour ends there.
	// A skill the configuration no longer attaches is unavailable, and the
	// refusal keeps the process (item 4).
	k, reason, err := a.available(ctx, skillUID)
	if err != nil {
		return nil, err
	}
	switch {
	case reason != "" && reason != notAttached && cont:
		return nil, a.withdraw(l, reason)
	case reason != "":
		return nil, a.refuse(SkillUnavailable, false, fmt.Sprintf("skill %d: %s", skillUID, reason))
	}
	// (e) A start's current version: an approved instruction marked a process.
	if !cont {
		ok, appr, err := a.skills.Instructs(ctx, skillUID)
		if err != nil && !errors.Is(err, skill.ErrNotFound) {
			return nil, fmt.Errorf("process skill %d: %w", skillUID, err)
		}
		if !ok || !appr.Version.Process {
			return nil, a.refuse(NotAProcess, false, fmt.Sprintf("skill %d", skillUID))
		}
		l.Pin = &skill.Pin{Skill: appr.Skill, Source: appr.Source, Digest: appr.Digest}
		l.ProcessSkill = k.Identifier
	}
	// (f) No service account; no four-eyes configuration.
	if a.actor.ServiceAccount {
		return nil, a.refuse(ServiceAccount, false, "")
	}
	if a.prep.Config.RequireSecondApprover {
		return nil, a.refuse(SecondApproverRequired, cont, "")
	}
	// (g) The subject record.
	if l.Subject != nil {
		ok, err := a.subjectAllowed(ctx, a.actor, *l.Subject)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, a.refuse(SubjectDenied, false, l.Subject.String())
		}
	}
	// (h) The derived pin.
	appr, err := a.skills.PinCheck(ctx, *l.Pin)
	var pe *skill.PinError
	if errors.As(err, &pe) {
		return nil, a.withdraw(l, pe.Reason)
	}
	if err != nil {
		return nil, fmt.Errorf("process skill %d: %w", skillUID, err)
	}
	a.emit(run.EventLineage, l)
	return &agent.Hold{
		Pin:     *l.Pin,
		Section: skill.Section{Pin: *l.Pin, Identifier: l.ProcessSkill, Name: appr.Version.Name, Body: appr.Version.Body},
		Tools:   appr.Version.AllowedTools,
		Subject: l.Subject,
		Skill:   l.ProcessSkill,
		Origin:  l.Origin,
		// Item 9: a continued process was admitted when its conversation
		// first sent it — unless the last run that ran never sent a call.
		Admits: !cont || a.lastRan.Usage.Iterations == 0,
	}, nil
}

// refuse records what a refused continuation carries (item 4) and returns
// the refusal: the lineage it would have carried, marked carriedFrom its
// predecessor; a lineage without a pin naming the predecessor when it has not
// read one; nothing when the predecessor hands on no process, and nothing for
// a start.
func (a *attempt) refuse(c Refusal, approvalDenied bool, detail string) error {
	if pred := a.prep.Predecessor; pred != "" {
		switch a.know {
		case unread:
			a.emit(run.EventLineage, Lineage{Configuration: a.prep.Run.Configuration, Predecessor: pred})
		case held:
			l := a.carried
			l.Configuration, l.Released, l.Predecessor, l.CarriedFrom = a.prep.Run.Configuration, false, pred, pred
			a.emit(run.EventLineage, l)
		}
	}
	return &RefusedError{Case: c, ApprovalDenied: approvalDenied, Detail: detail}
}

// withdraw refuses the run as pin_withdrawn after it recorded its lineage
// without the process, released, so the next turn goes on without it (items
// 2(h) and 6) — the same end a withdrawn pin makes on resume.
func (a *attempt) withdraw(l Lineage, reason skill.PinReason) error {
	l.Pin, l.Released = nil, true
	a.emit(run.EventLineage, l)
	return &RefusedError{Case: PinWithdrawn, Detail: string(reason)}
}

// notAttached is the answer of available for a skill the configuration
// does not attach: unavailable, but no statement about the pinned record.
const notAttached skill.PinReason = "not_attached"

// available is check (d): the skill is attached to the run's configuration
// (either load mode), enabled, not orphaned, and its source is enabled and
// admitted by the trust floor the catalogue applies. It answers "" when it
// is, notAttached when the configuration does not attach it, and otherwise
// the pin reason the pin check gives a record in that state (skill_gone,
// orphaned for a disabled or orphaned record, trust_below_threshold).
func (a *attempt) available(ctx context.Context, uid int64) (skill.Skill, skill.PinReason, error) {
	atts, err := a.skills.Attachments(ctx, a.prep.Config.UID)
	if err != nil {
		return skill.Skill{}, "", err
	}
	attached := false
	for _, at := range atts {
		attached = attached || at.Skill == uid
	}
	if !attached {
		return skill.Skill{}, notAttached, nil
	}
	k, err := a.skills.Get(ctx, uid)
	if errors.Is(err, skill.ErrNotFound) {
		return skill.Skill{}, skill.PinSkillGone, nil
	}
	if err != nil {
		return skill.Skill{}, "", err
	}
	if !k.Enabled || k.Orphaned {
		return k, skill.PinOrphaned, nil
	}
	src, err := a.skills.SourceGet(ctx, k.Source)
	if errors.Is(err, skill.ErrNotFound) {
		return k, skill.PinTrustBelow, nil
	}
	if err != nil {
		return k, "", err
	}
	if !src.Enabled || !a.skills.Admitted(src.Trust) {
		return k, skill.PinTrustBelow, nil
	}
	return k, "", nil
}

// sameRef reports whether two subject references name the same record in
// the same language (nil names none).
func sameRef(x, y *content.Ref) bool {
	if x == nil || y == nil {
		return x == y
	}
	return *x == *y
}
