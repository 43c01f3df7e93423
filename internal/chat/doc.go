// Package chat owns the guided chat of ADR-018…023: conversations about a
// page (with a skill), their approval cards and answers, withdrawal and
// hand-back, the outcomes of decided cards — and the open points of ADR-022.
//
// Open points are owned by package openpoint: the chat decides when a
// decided card records or closes them (settleCard) and offers them again in
// the system prompt of a process conversation.
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
