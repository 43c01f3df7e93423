-- +goose Up
-- Fewer index entries per transition of a run: runs_initiator goes (no
-- query filters on it), and one index on (status, finished_at) serves the
-- status queries and purge instead of two. (SQLite also clusters run_events.)
DROP INDEX runs_initiator;
DROP INDEX runs_finished_at;
DROP INDEX runs_status;
CREATE INDEX runs_status ON runs(status, finished_at);

-- +goose Down
DROP INDEX runs_status;
CREATE INDEX runs_status ON runs(status);
CREATE INDEX runs_finished_at ON runs(finished_at);
CREATE INDEX runs_initiator ON runs(initiator);
