// Package campaign runs one process over many pages: a campaign is an
// owner's choice of a process, a configuration, the pages of a subtree
// (root page and depth) or of a dashboard filter, and languages. Each page
// in each language is an item, and each item is its own tour, started in
// the background exactly as its owner would start it in the chat
// (chat.Service.Start and the process's first message), with the same
// lineage, pins and start checks, read against the owner as she is at the
// item's pickup: a page she may no longer edit is skipped with its reason.
// The tours run until their first card and wait; nothing is written
// without an answer. The cards of a campaign are answered in one review
// list, each through the chat's own answer against its own turn digest.
//
// A campaign's state (running, paused, cancelled, done) and an item's
// state change by one guarded UPDATE each (transitions.go); the work is a
// queue job per campaign (Service.Work) that claims items under the
// campaign's and the installation's concurrency limits, and an item's tour
// is started once (an item's claim, its conversation recorded once, and its
// first message sent only to a conversation without one).
package campaign
