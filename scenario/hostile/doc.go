// Package hostile_test proves the hostile-input, session and secret rules
// through the HTTP API and the command line, on SQLite
// and PostgreSQL: one file per item, tests named after the behaviour.
package hostile_test
