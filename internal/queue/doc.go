// Package queue carries run uuids from the API to the workers on River:
// riversqlite for the embedded SQLite default, riverdatabasesql for
// PostgreSQL (both on the same database/sql pool as the rest of Waymark, so a
// run row and its job commit in one transaction). A job carries only the run
// uuid; the run row is the state. River retries a job only when the handler
// failed before claiming its run; requeues of a claimed run are the
// runtime's (it inserts a new job for them).
package queue
