// Package invariant audits a Waymark database for the invariants of
// DESIGN.md §6 that stored rows and events can show:
// each approved call written at most once, no write without an approval of
// its turn, every run in a defined state, no run running without a live
// lease, no conversation stuck, every accepted skip kept as an open point
// until an applied write or a keep closed it, and no content stored at the
// privacy levels metadata and none.
//
// It is a test-side auditor: it reads every table it needs (runs,
// run_events, record_history, conversations, conversation_outcomes,
// open_points, configurations and River's river_job) directly with SQL,
// across package boundaries no domain code may cross, and it never writes.
// The load, crash and fault proofs call Check after their tours; each check
// has a test that builds the violating state by SQL.
package invariant
