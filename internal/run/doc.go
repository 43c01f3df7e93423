// Package run owns agent runs: the run row (configuration, initiator,
// status, termination reason, error class, usage, lease, requeue count,
// write fence, stored request, suspended state), the guarded transitions
// between statuses, the per-run event stream with its privacy filter, and
// retention.
//
// The run row is the state (DESIGN §3). Every status change is one guarded
// conditional UPDATE that reports whether it won (DESIGN §6 invariant 3):
// the WHERE clause names the allowed source statuses (and the lease owner
// where one is held), and no transition ever matches a terminal row, so
// terminal is terminal and a late settle is dropped. A cancel wins over a
// late suspend because Suspend requires status running.
//
// What is stored at privacy level metadata holds ids, counts, digests and
// times, never content (DESIGN §6 invariant 10): Filter runs on every event
// payload before it is written. Enumerations are those of DESIGN §5.
package run
