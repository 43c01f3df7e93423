-- +goose Up
-- Open points of guided processes (ADR-022): a proposal the editor skipped,
-- one row per field of its target ('' for a record without field), keyed by
-- the process skill, the page the conversation is about and the target.
-- The table holds what is open: closing deletes the row. Only identities are
-- stored, never a value or the proposal's text. language is the target
-- record's language, read when the point was recorded.
CREATE TABLE open_points (
    id         INTEGER PRIMARY KEY,
    skill_uid  BIGINT NOT NULL,
    page_uid   BIGINT NOT NULL,
    tbl        TEXT NOT NULL,
    uid        BIGINT NOT NULL,
    field      TEXT NOT NULL DEFAULT '',
    language   BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    UNIQUE (skill_uid, page_uid, tbl, uid, field)
);
-- The dashboard scans newest first (created_at DESC, id DESC).
CREATE INDEX open_points_recent ON open_points(created_at, id);
-- One page's points (the page list, the prompt, list_open_points).
CREATE INDEX open_points_page ON open_points(page_uid, created_at);
-- Closing by target.
CREATE INDEX open_points_target ON open_points(tbl, uid, field);

-- +goose Down
DROP TABLE open_points;
