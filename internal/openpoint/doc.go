// Package openpoint owns the open points of ADR-022: the proposals an editor
// skipped, their storage and the one visibility rule every list applies.
//
// An open point is one row per field of a card's target in the table
// open_points, keyed by the process skill, the conversation's page (the
// subject, P.S1) and the target record and field. Only identities are
// stored, never a value or the proposal's text. A skip records them (P.R2,
// P.R3); an applied COMPLETE write without hook failure (P.C1) or the answer
// *Behalten* (P.K1) closes them by deleting the rows, whichever skill
// recorded them; nothing else does (P.C2, P.K2, P.Z1, DESIGN.md §6
// invariant 9). When to record or close is the chat's decision (package
// chat calls Store); what is stored and who sees it is decided here.
//
// One visibility rule serves the page list, the dashboard, the system
// prompt and the read tool list_open_points (P.O1, P.O2, P.D1–P.D3): the
// reader must be able to show the point's page (access.PageTree, the
// checker's own page rule in batches), read the target table, edit the
// field (an excluded field needs a grant) and edit the point's language,
// and the target record must still exist. The dashboard counts its limit
// after that rule and describes each point with a sentence built from
// schema labels and the page title in the reader's backend language, never
// from model text (P.D2).
package openpoint
