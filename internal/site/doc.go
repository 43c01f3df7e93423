// Package site answers what the editor's screens show of the website itself:
// the page tree a user may show (with the languages they may edit), a page's
// preview content in a language, and the pages worth improving. It decides
// nothing about permissions of its own: every page passes
// access.Checker.ActorMayShowPageRecord, and the preview reads what read_page
// reads (the page, its translation, the content elements in that language and
// in all languages). (the editor's web UI).
package site
