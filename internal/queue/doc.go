// Package queue carries work from the API to the workers on River:
// riversqlite for the embedded SQLite default, riverdatabasesql for
// PostgreSQL (both on the same database/sql pool as the rest of Waymark, so a
// row and its job commit in one transaction), with River's pgx listener on
// PostgreSQL so that workers wake on an insert instead of polling.
//
// Four kinds of job: a run (waymark_run: only the run uuid; the run row is
// the state), a chat job (waymark_chat, on the queue "chat": a conversation's
// recorded message or decision), a resume job
// (waymark_resume, on the queue "chat": a decision or an input on a waiting
// run taken through the runs API, ; its handler's outcome is
// recorded as the job's River output, which the waiting request reads with
// ResumeOutcome) and the reaper
// (waymark_reap: a River periodic job that only the elected leader inserts,
// so one reaper serves every process of the installation).
// River retries a run job only when the handler failed before claiming its
// run; requeues of a claimed run are the runtime's (it inserts a new job for
// them).
// The queue owns the transaction a job is inserted in (Queue.InTx): River
// needs a database/sql transaction, which SQLite's fast store.DB.InTx is not.
package queue
