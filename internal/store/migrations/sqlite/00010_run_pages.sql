-- +goose Up
-- Fewer pages per commit of the agent runtime: run_events becomes a table
-- clustered on its primary key (one b-tree instead of a table and an index),
-- runs_initiator goes (no query filters on it), and one index on
-- (status, finished_at) serves the status queries and purge instead of two.
CREATE TABLE run_events_clustered (
    run_uuid   TEXT NOT NULL REFERENCES runs(uuid) ON DELETE CASCADE,
    sequence   BIGINT NOT NULL,
    kind       TEXT NOT NULL,
    payload    TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (run_uuid, sequence)
) WITHOUT ROWID;
INSERT INTO run_events_clustered (run_uuid, sequence, kind, payload, created_at)
    SELECT run_uuid, sequence, kind, payload, created_at FROM run_events;
DROP TABLE run_events;
ALTER TABLE run_events_clustered RENAME TO run_events;

DROP INDEX runs_initiator;
DROP INDEX runs_finished_at;
DROP INDEX runs_status;
CREATE INDEX runs_status ON runs(status, finished_at);

-- +goose Down
DROP INDEX runs_status;
CREATE INDEX runs_status ON runs(status);
CREATE INDEX runs_finished_at ON runs(finished_at);
CREATE INDEX runs_initiator ON runs(initiator);
CREATE TABLE run_events_rowid (
    run_uuid   TEXT NOT NULL REFERENCES runs(uuid) ON DELETE CASCADE,
    sequence   BIGINT NOT NULL,
    kind       TEXT NOT NULL,
    payload    TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (run_uuid, sequence)
);
INSERT INTO run_events_rowid (run_uuid, sequence, kind, payload, created_at)
    SELECT run_uuid, sequence, kind, payload, created_at FROM run_events;
DROP TABLE run_events;
ALTER TABLE run_events_rowid RENAME TO run_events;
