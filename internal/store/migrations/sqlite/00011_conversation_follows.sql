-- +goose Up
-- A conversation that follows a run it does not drive: a card or question
-- decided elsewhere (the inbox, the runs API) whose run still runs. A read
-- applies the run's state as soon as it pauses or ends.
ALTER TABLE conversations ADD COLUMN follows_run BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE conversations DROP COLUMN follows_run;
