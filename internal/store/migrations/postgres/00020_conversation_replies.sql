-- +goose Up
-- The model's reply to a conversation's turn, kept in the transaction that
-- completes the turn's run (chat.KeepReplyTx): the run stores its answer only
-- at privacy full, so a worker that died after the run completed — or one
-- that finished a continuation another worker began — took the reply with
-- it, and the conversation settled with an empty message. Whoever settles
-- the conversation takes the reply from here and deletes it.
CREATE TABLE conversation_replies (
    conversation_id BIGINT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    run_uuid        TEXT NOT NULL,
    content         TEXT NOT NULL,
    PRIMARY KEY (conversation_id, run_uuid)
);

-- +goose Down
DROP TABLE conversation_replies;
