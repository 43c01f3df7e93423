// Package content owns the CMS side of Waymark: table schemas in the spirit of
// TYPO3's TCA (table and field labels per language, exclude flags, the
// language field), records (pages and content elements) with their language,
// translation parent, deleted flag and workspace, and the one Writer through
// which every change is made: it checks the acting user's permissions,
// records the edit history (who, when, field, old, new) and returns what it
// wrote.
//
// Records and site languages are read from a Source: Builtin (Waymark's own
// tables) or a CMS beside Waymark (TYPO3, package typo3/live). The source is
// handed to the constructors of the services that read records where the
// application is wired (app.New), never looked up by database; a nil Source
// is Builtin (OrBuiltin).
package content
