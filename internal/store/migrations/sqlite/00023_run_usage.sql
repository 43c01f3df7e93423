-- +goose Up
-- What each model call cost: the configuration's prices per million input
-- and output tokens, and one row per recorded usage of a run (a segment's
-- tokens as the provider reported them), priced when it is recorded, so a
-- later price change does not rewrite the past. The rows outlive the run
-- (no foreign key: a purged run's costs still count in its month).
ALTER TABLE configurations ADD COLUMN price_input_per_mtok REAL NOT NULL DEFAULT 0;
ALTER TABLE configurations ADD COLUMN price_output_per_mtok REAL NOT NULL DEFAULT 0;
CREATE TABLE run_usage (
    id                INTEGER PRIMARY KEY,
    run_uuid          TEXT NOT NULL,
    conversation_id   BIGINT NOT NULL DEFAULT 0,
    configuration     BIGINT NOT NULL,
    model             TEXT NOT NULL DEFAULT '',
    initiator         BIGINT NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    cost              REAL NOT NULL DEFAULT 0,
    created_at        BIGINT NOT NULL
);
CREATE INDEX run_usage_run ON run_usage(run_uuid, id);
CREATE INDEX run_usage_conversation ON run_usage(conversation_id);
CREATE INDEX run_usage_created ON run_usage(created_at);

-- +goose Down
DROP TABLE run_usage;
ALTER TABLE configurations DROP COLUMN price_output_per_mtok;
ALTER TABLE configurations DROP COLUMN price_input_per_mtok;
