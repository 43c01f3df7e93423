// Package access owns backend users, groups (with subgroups), grants and the
// live permission checks: table read/modify, excluded fields, languages, DB
// mounts and page permission bits, the root-level rule. Every check reads the
// acting user and its groups as stored now (DESIGN.md §6 invariant 5), never a
// copy frozen earlier; administrators pass everything; a disabled or missing
// user passes nothing.
package access
