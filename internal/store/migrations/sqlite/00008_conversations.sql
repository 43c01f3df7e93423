-- +goose Up
-- Guided chat: conversations about a page, their messages and the outcomes of decided cards.
CREATE TABLE conversations (
    id                INTEGER PRIMARY KEY,
    owner_uid         BIGINT NOT NULL,
    configuration_uid BIGINT NOT NULL,
    page_uid          BIGINT NOT NULL,
    language          BIGINT NOT NULL,
    skill_uid         BIGINT NOT NULL DEFAULT 0,
    process           BOOLEAN NOT NULL DEFAULT FALSE,
    status            TEXT NOT NULL,
    last_run_uuid     TEXT NOT NULL DEFAULT '',
    pending_run_uuid  TEXT NOT NULL DEFAULT '',
    card              TEXT NOT NULL DEFAULT '',
    progress          TEXT NOT NULL DEFAULT '',
    highlight         TEXT NOT NULL DEFAULT '',
    error             TEXT NOT NULL DEFAULT '',
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE INDEX conversations_owner ON conversations(owner_uid, updated_at);

CREATE TABLE conversation_messages (
    id              INTEGER PRIMARY KEY,
    conversation_id BIGINT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role            TEXT NOT NULL,
    content         TEXT NOT NULL,
    notice          TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL
);
CREATE INDEX conversation_messages_conversation ON conversation_messages(conversation_id, id);

CREATE TABLE conversation_outcomes (
    id              INTEGER PRIMARY KEY,
    conversation_id BIGINT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    run_uuid        TEXT NOT NULL,
    outcome         TEXT NOT NULL,
    after_message   BIGINT NOT NULL,
    tbl             TEXT NOT NULL DEFAULT '',
    uid             BIGINT NOT NULL DEFAULT 0,
    fields          TEXT NOT NULL DEFAULT '[]',
    created_at      BIGINT NOT NULL
);
CREATE INDEX conversation_outcomes_conversation ON conversation_outcomes(conversation_id, id);

-- +goose Down
DROP TABLE conversation_outcomes;
DROP TABLE conversation_messages;
DROP TABLE conversations;
