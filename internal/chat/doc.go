// Package chat owns the guided chat of ADR-018…023: conversations about a
// page (with a skill), their approval cards and answers, withdrawal and
// hand-back, the outcomes of decided cards — and the open points of ADR-022.
//
// Open points (OpenPoints) are the proposals an editor skipped: one row per
// field of the card's target in the table open_points, keyed by the process
// skill, the conversation's page (the subject, P.S1) and the target record
// and field. Only identities are stored, never a value or the proposal's text.
// A skip records them (P.R2, P.R3); an applied COMPLETE write without hook
// failure (P.C1) or the answer *Behalten* (P.K1) closes them by deleting the
// rows, whichever skill recorded them; nothing else does (P.C2, P.K2, P.Z1,
// DESIGN.md §6 invariant 9).
//
// One visibility rule serves the page list, the dashboard and the prompt
// (P.O1, P.O2, P.D1–P.D3): the reader must be able to show the point's page,
// read the target table, edit the field (an excluded field needs a grant)
// and edit the point's language, and the target record must still exist.
// The dashboard counts its limit after that rule and describes each point
// with a sentence built from schema labels and the page title in the
// reader's backend language, never from model text (P.D2). The read tool
// list_open_points lives in package tool and applies the same rule to one page.
//
// A conversation's status changes only by compare-and-set (casTx). A message,
// an answer and an end-tour each claim the conversation on the card or
// question they read before they touch the run, so the loser of a race
// changes nothing; a decision taken elsewhere (inbox, runs API) is handed
// back on the next read with a notice saying what became of it, and a run
// that still runs is followed until it pauses or ends (issue 11).
//
// Each message and each decision is recorded with its chat job in one
// transaction (job.go); a chat worker of any process carries it out, acting
// only while the request's claim still holds. A turn or decision whose
// worker stopped is released on a read once its run is settled and no job of
// it waits, at least one lease after the claim (issue 15 items 1 and 2).
package chat
