// Package content owns the CMS side of Waymark: table schemas in the spirit of
// TYPO3's TCA (table and field labels per language, exclude flags, the
// language field), records (pages and content elements) with their language,
// translation parent, deleted flag and workspace, and the one Writer through
// which every change is made: it checks the acting user's permissions,
// records the edit history (who, when, field, old, new) and returns what it
// wrote.
package content
