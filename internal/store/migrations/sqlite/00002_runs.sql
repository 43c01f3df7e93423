-- +goose Up
-- Runs of the agent runtime and their event streams (DESIGN §5–6).
-- The run row is the state: every status change is one guarded UPDATE.
CREATE TABLE runs (
    uuid               TEXT PRIMARY KEY,
    configuration      BIGINT NOT NULL,
    initiator          BIGINT NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('queued', 'running', 'waiting_for_approval',
                           'waiting_for_input', 'completed', 'failed', 'cancelled')),
    termination_reason TEXT NOT NULL DEFAULT '',
    error_class        TEXT NOT NULL DEFAULT '',
    error_message      TEXT NOT NULL DEFAULT '',
    prompt_tokens      BIGINT NOT NULL DEFAULT 0,
    completion_tokens  BIGINT NOT NULL DEFAULT 0,
    iterations         INTEGER NOT NULL DEFAULT 0,
    lease_owner        TEXT NOT NULL DEFAULT '',
    lease_expires_at   BIGINT NOT NULL DEFAULT 0,
    requeue_count      INTEGER NOT NULL DEFAULT 0,
    -- The write fence: JSON naming the tool call about to write, '' when none.
    pending_effect     TEXT NOT NULL DEFAULT '',
    -- The stored request of a queued run (JSON), '' when none.
    request            TEXT NOT NULL DEFAULT '',
    -- The suspended state while waiting (JSON), '' when none.
    suspended          TEXT NOT NULL DEFAULT '',
    allowed_tools      TEXT NOT NULL DEFAULT 'null',
    answer             TEXT NOT NULL DEFAULT '',
    -- Last sequence handed out to run_events of this run.
    event_sequence     BIGINT NOT NULL DEFAULT 0,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    finished_at        BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX runs_status ON runs(status);
CREATE INDEX runs_initiator ON runs(initiator);
CREATE INDEX runs_finished_at ON runs(finished_at);

CREATE TABLE run_events (
    run_uuid   TEXT NOT NULL REFERENCES runs(uuid) ON DELETE CASCADE,
    sequence   BIGINT NOT NULL,
    kind       TEXT NOT NULL,
    payload    TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (run_uuid, sequence)
);

-- +goose Down
DROP TABLE run_events;
DROP TABLE runs;
