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
//
// # Fast paths
//
// Each fast path buys speed, imposes one rule on its callers, and has a test
// that guards the rule. WAYMARK_STORE_NO_FAST_PATHS=1 (Config.NoFastPaths)
// turns all of them off; the answers must not change, and CI runs the store,
// agent and chat suites once so. The SQLite write mutex is not among them:
// it is the lock discipline the others rely on.
//
//   - Statement caches. The pool prepares each query once (DB.stmt), and
//     every SQLite connection keeps the statements of what it was sent
//     unprepared (serialConnector): parsing was a fifth of a queued run's
//     CPU. Rule: none for callers; a query with ";" is never kept. Guard:
//     TestAConnectionRerunsUnpreparedQueriesFromItsStatements.
//   - InTx on SQLite. A transaction is BEGIN IMMEDIATE on a connection of its
//     own, after a Go mutex, with no database/sql transaction (whose watcher
//     goroutines cost more than the statements). Rules: inside the callback
//     write only through its Tx — a write through the DB handle, or another
//     InTx, is ErrNestedTx with Config.CheckNesting (every test database),
//     and a deadlock without it; a transaction handed to River comes from
//     queue.Queue.InTx, never from InTx, and no domain code calls InSQLTx.
//     Guards: TestAWriteThroughTheHandleInsideATransactionIsErrNestedTx,
//     TestOnlyTheQueueBeginsDatabaseSQLTransactions (internal/queue).
//   - Read scopes (ReadScope). A stretch of reads shares one SQLite
//     snapshot, so its locks and the settings generation are taken once.
//     Rule: a scope is for reading; a write through the DB handle under it
//     (Exec, InTx) ends the snapshot's use, so no read after a write is
//     served from before it. Guards: TestReadScopeReadsOneSnapshotUntilItEnds,
//     TestAReadScopeNeverServesAReadAfterItsOwnWrite.
//   - The settings generation (Generation, GenCache). Values derived from
//     settings tables are kept in memory while a counter that triggers move
//     on every change stands; a transaction rereads it only after a
//     statement that may have written. Rules: a cache is declared with
//     NewGenCache and the tables it reads, code that reads Generation itself
//     registers its tables with GenerationTables, and every registered table
//     has triggers that move the generation (a migration's job); values are
//     never modified once loaded. Guards: TestEveryTableKeptForAGenerationMovesIt
//     (internal/app, from the registrations of the linked packages),
//     TestGenCacheKeepsNothingLoadedInsideATransaction,
//     TestATransactionRereadsTheGenerationOnlyAfterItWrites.
//   - Settings scopes (SettingsScope). A short stretch of code (a request's
//     authentication, an answer's checks) reads the settings generation once,
//     on both dialects. Rules: a scope never spans a wait — a model call, a
//     stream, a long poll — since a change committed elsewhere shows only in
//     the next scope; a write through the DB handle under it drops the kept
//     generation before and after the write. Guards:
//     TestASettingsScopeReadsTheGenerationOnceAndSeesItsOwnWrites,
//     TestASettingsScopeInsideAnotherIsTheOuterOne.
//   - Background checkpoints (checkpoint.go). SQLite's log is copied back off
//     the writers' path every 100 commits, so no commit pays for a whole
//     checkpoint. Rule: none for callers; Close stops it. Guards:
//     TestBackgroundCheckpointsCopyTheLogWithoutTheWriters, TestCloseStopsTheCheckpointer.
package store
