// Package access owns backend users, groups (with subgroups), grants and the
// live permission checks: table read/modify, excluded fields, languages, DB
// mounts and page permission bits, the root-level rule. Every check reads the
// acting user and its groups as stored now (DESIGN.md §6 invariant 5), never a
// copy frozen earlier; administrators pass everything; a disabled or missing
// user passes nothing.
//
// The administration of users and groups lives here too:
// CreateAccount, UpdateAccount, CreateGroup and UpdateGroup validate every
// reference against the store, never leave the site without an active
// administrator, and end a disabled user's sessions in the same transaction.
//
// Users are read from a Directory (the built-in one, or TYPO3's beside it)
// and pages from a content.Source, both handed in where the application is
// wired: to NewChecker and NewPageTree, and as arguments to LoadActor and
// the administration's functions. A nil Directory or Source is the built-in
// one; nothing is looked up by database.
package access
