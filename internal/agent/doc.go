// Package agent is Waymark's runtime: it runs a request as a run (a row plus
// an ordered event stream), calls the model, runs tools, suspends for a human
// decision before any approval-bound call, resumes on an approval whose turn
// digest and previews match what the approver saw, and ends every run with a
// status and a reason (DESIGN.md §2, "the way of one process turn", and the
// invariants of §6).
//
// Every segment of execution — an interactive start, a worker pickup, a
// resume — holds the run's lease; every write of a segment is guarded on
// owning it, and a segment that lost it stops without settling. Events of a
// segment are buffered and committed together with the next guarded
// transition, so an approval cycle costs a handful of commits: every such
// commit goes through segment.commit (segment.go), the one guarded commit.
//
// The files by concern (issue 16 item 5): runtime.go (Config, New, Run,
// Enqueue, RunQueued), loop.go (the tool loop), segment.go (a segment's
// buffered events and its guarded transitions), suspend.go (suspension and
// the card), decision.go (Decision, its validation and the denial token),
// approval.go (Approve: checks, claim, previews, re-suspension),
// execution.go (running approved calls under the fence; the approved write
// in the transaction of its guard), input.go (SubmitInput), resume.go
// (ApproveOnWorker and SubmitInputOnWorker: decisions carried out by a
// worker through a resume job, and that job's handler, issue 15 item 1),
// visibility.go (who sees a run, and how much), cancel.go, heartbeat.go,
// reap.go, and the skill and process seams (skills.go, process.go,
// processloop.go). The provider factory is the wiring's
// (internal/llm/providers); the queue, the observers and the test hooks are
// Config fields: nothing is set after New.
package agent
