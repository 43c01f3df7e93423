-- +goose Up
-- The conversations that wait on a run, found by the run: a requeued turn's
-- result (chat.Service.QueuedResult, after every queued segment) and the
-- follow-up of a decision taken elsewhere read conversations by
-- pending_run_uuid; without an index each of those scans every conversation.
CREATE INDEX conversations_pending_run ON conversations (pending_run_uuid);

-- +goose Down
DROP INDEX conversations_pending_run;
