// Package scenario holds the end-to-end scenario tests of Waymark: each file
// drives the real application (internal/waymarktest) through its HTTP API,
// with a scripted OpenAI-compatible server, on SQLite and PostgreSQL. Files
// are named after the capability or spec item they prove.
package scenario
