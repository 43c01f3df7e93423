// Package queue carries run uuids from the API to the workers on River:
// riversqlite for the embedded SQLite default, riverdatabasesql for
// PostgreSQL (both on the same database/sql pool as the rest of Waymark, so a
// run row and its job commit in one transaction). A job carries only the run
// uuid; the run row is the state. River does not retry: the runtime decides
// about requeues (and inserts a new job for them), so every job has one attempt.
package queue
