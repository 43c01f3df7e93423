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
// transition, so an approval cycle costs a handful of commits.
package agent
