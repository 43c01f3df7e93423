// Package chat owns the guided chat of ADR-018…023: conversations about a
// page (with a skill), their approval cards and answers, withdrawal and
// hand-back, the outcomes of decided cards — and the open points of ADR-022.
//
// Open points are owned by package openpoint: the chat decides when a
// decided card records or closes them (settler.settleCard) and offers them again in
// the system prompt of a process conversation.
//
// A conversation's status changes only by compare-and-set, and only by one
// of the events of the transition table (transitions, applyTx): each names
// the statuses it may leave from, those it goes to and the columns it may
// change besides status and updated_at; applyTx refuses any other. A
// change not naming follows_run ends following a run. A message,
// an answer and an end-tour each claim the conversation on the card or
// question they read before they touch the run, so the loser of a race
// changes nothing; a decision taken elsewhere (inbox, runs API) is handed
// back on the next read with a notice saying what became of it, and a run
// that still runs is followed until it pauses or ends.
//
// Each message and each decision is recorded with its chat job in one
// transaction (job.go); a chat worker of any process carries it out, acting
// only while the request's claim still holds. A turn or decision whose
// worker stopped is released on a read once its run is settled and no job of
// it waits, at least one lease after the claim.
//
// The Service is a façade over small parts, each built by New with only the
// dependencies it uses (its own fields, the runtime narrowed to the methods
// it calls); a part that needs another holds it behind a small interface
// declared where it is used, never embedded:
//   - turns (turn.go, pagecontext.go): a message, its turn job, its run;
//   - decisions (answer.go, decide.go, question.go): an answer claimed, then
//     carried out by its job or handed back;
//   - recovery (reconcile.go, reap.go): a decision taken elsewhere handed
//     back; a turn, decision or end-tour whose worker stopped restarted,
//     rescued or finished (reconciler is what turns and decisions need of it);
//   - settler (settle.go, handover.go): a run's state onto the conversation,
//     with a decided card's outcome and open points, in one transaction —
//     the end every other part reaches; it depends on none of them;
//   - jobs (job.go): a claim committed with its job (committer), the job
//     worked on the queue or a goroutine of its own;
//   - tours (tour.go): a tour's end; reads (view.go) change nothing.
//
// Following an answer. One card answer, from the handler to its commit,
// reads top to bottom, each file entered once:
//
//  1. internal/httpapi/handle_conversations.go: the answer route decodes
//     the body and calls Service.Answer.
//  2. service.go: Service.Answer hands it to the decisions.
//  3. answer.go: decisions.Answer checks the answer's word, reads the
//     conversation the actor owns, brings it up to date, checks the card
//     (stale digest, offered answers, four-eyes) and claimDecision commits
//     the event "claim answer", the editor's line and the decision's job.
//  4. conversation.go: owned reads the row (getRow).
//  5. reconcile.go: reconcile; it changes the conversation only when the
//     run was decided elsewhere (handover.go then).
//  6. job.go: commit records the job in the claim's transaction (on the
//     queue, or run on a goroutine once committed) — the request's 202.
//  7. transition.go: applyTx checks the event against the table; casTx is
//     its compare-and-set.
//  8. transcript.go: the editor's line and the message count that keys the
//     card's outcome.
//
// The decision's job then: job.go (Service.Work, work), decide.go (decide,
// carryOut: the decision handed to the runtime; a refusal is handed back,
// handBack), settle.go (applyWith, settleRunWith and settleCardTx: the run's
// state, the card's outcome and its open points in one transaction),
// transition.go (applyTx), transcript.go (the outcome and the reply's lines).
//
// The transition table (generated from transitions by
// TestDocShowsTheTransitionTable; go test ./internal/chat -run
// TestDocShowsTheTransitionTable -update rewrites it):
//
//	start: (new) → idle
//	    changes: -
//	    why: a conversation is started (Start inserts it)
//	send: idle | failed | processing → processing
//	    changes: last_run_uuid, pending_run_uuid, card
//	    why: a message claims the conversation for its turn (processing: after its withdrawal)
//	withdraw: awaiting_approval | awaiting_input → processing
//	    changes: card
//	    why: a message or an end-tour claims the decision it read, to cancel the waiting run
//	unclaim: processing → awaiting_approval | awaiting_input
//	    changes: card, error
//	    why: a claim that changed nothing is given back: the decision waits as before
//	claim answer: awaiting_approval | awaiting_input → processing
//	    changes: -
//	    why: an answer claims the card or question it read; the card column keeps it (decided)
//	hand back: processing → awaiting_approval | awaiting_input
//	    changes: card, error
//	    why: the runtime refused the answer: the decision goes back to the editor with the reason
//	decided elsewhere: processing | awaiting_approval | awaiting_input → processing
//	    changes: card, follows_run
//	    why: the run was decided elsewhere and still runs: the conversation follows it
//	follow: processing → processing
//	    changes: card, follows_run
//	    why: a claim whose run is in a state the caller cannot tell: the conversation follows it
//	card shown: processing | awaiting_approval | awaiting_input → awaiting_approval
//	    changes: pending_run_uuid, card, error, progress, highlight
//	    why: the run paused for an approval: its card is shown
//	question asked: processing | awaiting_approval | awaiting_input → awaiting_input
//	    changes: pending_run_uuid, card, error, progress, highlight
//	    why: the run paused for input: its question is asked
//	reply applied: processing | awaiting_approval | awaiting_input → idle
//	    changes: last_run_uuid, pending_run_uuid, card, error, progress, highlight
//	    why: the run completed: its reply is applied
//	run cancelled: processing | awaiting_approval | awaiting_input → idle
//	    changes: last_run_uuid, pending_run_uuid, card, error, progress, highlight
//	    why: the run was cancelled (stopped, withdrawn or through the runs API)
//	run failed: processing | awaiting_approval | awaiting_input → failed
//	    changes: last_run_uuid, pending_run_uuid, card, error, progress, highlight
//	    why: the run failed or was refused: its reason is shown
//	stop: processing → idle
//	    changes: last_run_uuid, pending_run_uuid, card, error
//	    why: the editor stopped the turn
//	fail: processing → failed
//	    changes: card, error
//	    why: a turn or decision failed with an error it cannot hand on (recovery: interrupted)
//	restart turn: processing → processing
//	    changes: card
//	    why: recovery: a turn lost before its run began is claimed again, once
//	claim end-tour: idle | failed → processing
//	    changes: card, error
//	    why: an end-tour claims the conversation (the error column marks the claim)
//	end tour: processing → idle
//	    changes: last_run_uuid, pending_run_uuid, card, error, progress, highlight, skill_uid, process
//	    why: the tour ended (by its request, or by recovery of an interrupted end-tour)
//	give back: processing → idle | failed
//	    changes: card, error
//	    why: an end-tour that failed gives its claim back: the status and error read
//	set skill: idle | failed → idle
//	    changes: last_run_uuid, card, progress, highlight, skill_uid, process
//	    why: the skill changed: a new tour starts with the next message
package chat
