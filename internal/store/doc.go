// Package store opens Waymark's database — an embedded SQLite file or a
// PostgreSQL server — applies the embedded goose migrations of its dialect,
// and offers one database/sql code path for both.
//
// Queries are written once with "?" placeholders; Rebind turns them into
// "$n" for PostgreSQL. The schema rules that keep one code path possible:
// times are BIGINT unix microseconds, JSON is TEXT, booleans are bound as Go
// bools or written as the literals TRUE/FALSE (both dialects accept them),
// upserts use ON CONFLICT … DO UPDATE, generated ids come back through
// RETURNING.
package store
