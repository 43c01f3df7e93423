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
// The Runtime is the composition of five parts, each owning its own state
// and built in New with the dependencies it needs (runtime.go: Config, Deps,
// New):
//
//   - Reader (reader.go): reads runs and events as an actor may see them —
//     status.go, inbox.go, runlist.go, live.go, visibility.go (who sees a
//     run, and how much).
//   - Driver (driver.go): drives a segment — segment.go (its buffered events
//     and guarded transitions), heartbeat.go, stream.go (the model call),
//     loop.go (the tool loop), processloop.go, suspend.go (suspension and
//     the card), halt.go, skills.go (load_skill).
//   - Starter (start.go): Run, Enqueue, RunQueued, the process's start
//     checks (process.go) and Probe (probe.go).
//   - Decider (decider.go): decisions on suspended runs — decision.go
//     (Decision, its validation and the denial token), approval.go (checks,
//     claim, previews, re-suspension), execution.go (approved calls under
//     the fence; the approved write in the transaction of its guard),
//     input.go, resume.go (decisions carried out by a worker through a
//     resume job, and that job's handler), cancel.go, recheck.go (a waiting
//     run's skills) and continue.go (a decided turn whose worker died).
//   - Reaper (reaper.go): reap.go (expired leases, stranded runs and resume
//     jobs, Release).
//
// The provider factory is the wiring's (internal/llm/providers); the queue,
// the observers and the test hooks are Config fields: nothing is set after
// New.
package agent
