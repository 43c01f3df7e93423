// Package process implements guided processes as ADR-228 specifies them
// (shared/spec/000_9e14e59edf235a42.txt): the invocation of a process skill
// on a subject record, the start checks of the preparer in the spec's order,
// the lineage a run records as an event, the derivation of a continuation's
// process from its predecessor (never from the caller), the end of a
// process, and the catalogue of invocable process skills.
//
// The runtime (internal/agent) calls the Preparer at an interactive start
// and at worker pickup; it never imports this package — cmd/waymark (through
// internal/app) wires it in.
package process
