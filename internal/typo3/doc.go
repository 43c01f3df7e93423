// Package typo3 reads a TYPO3 13.4 installation's database the way TYPO3
// itself does, for Waymark running beside it (`--typo3`):
//
//   - content.go, listing.go: pages and tt_content, live and in TYPO3's
//     sorting, with their translations and the site languages (site.go reads
//     config/sites);
//   - directory.go, rights.go: backend users and their groups with
//     subgroups, resolved to the rights TYPO3 gives them — tables, exclude
//     fields, languages (the user's own allowed_languages too), mounts,
//     explicit_allowdeny for authMode fields such as tt_content.CType,
//     workspace_perms and the workspace TYPO3 puts the user in; page
//     rights are not decided here but by access.Checker's page rule, over
//     the pages and mounts read here, for every source alike;
//   - password.go, passwordhash.go: password logins (`--typo3-password-login`
//     beside the extension) checked against the hashes TYPO3 13 writes
//     (Argon2i, Argon2id, bcrypt; older kinds are named, not verified);
//     the directory refuses a user with an active second factor;
//   - write.go, writeback.go: the direct writer, the fallback for an
//     installation without the Waymark extension — one approved change
//     written with sys_history, sys_log and the page cache flushed, at most
//     once by its key; check.go (`waymark typo3 check`) names its limits;
//   - demo.go, schema.go: a demo TYPO3 database with the demo site
//     "Nordlicht Digital" in TYPO3 13.4's tables, so the path can be tried
//     without a TYPO3 installation. Columns a real installation has beyond
//     the ones in schema.go are ignored.
//
// Below it: live adapts this package to Waymark's content source and user
// directory; tca holds the TCA limits (max, trim, required) of the fields
// Waymark writes; bridge is the client of the TYPO3 extension
// (integrations/typo3), through which cards are written by DataHandler as
// the editor and editors sign in from TYPO3; typo3test gives tests a TYPO3
// database of their own (the demo site on MariaDB or PostgreSQL) and a real
// TYPO3 made by TYPO3's own installer.
package typo3
