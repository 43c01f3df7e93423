-- +goose Up
-- The changes Waymark wrote into the site's CMS beside it (TYPO3, through
-- the extension or the direct writer), one row per changed field, recorded
-- in the Waymark transaction that records the write: the export of applied
-- changes reads them beside record_history (the history of Waymark's own
-- records, which beside TYPO3 holds nothing). The record itself is TYPO3's
-- and its history TYPO3's sys_history; this is Waymark's account of what it
-- applied, with the page and language the record was on at the write (the
-- record is not kept here to look them up later). The rows outlive the run
-- (no foreign key: a purged run's changes still count in the export).
CREATE TABLE cms_changes (
    id         BIGSERIAL PRIMARY KEY,
    tbl        TEXT NOT NULL,
    uid        BIGINT NOT NULL,
    field      TEXT NOT NULL,
    old_value  TEXT NOT NULL,
    new_value  TEXT NOT NULL,
    user_uid   BIGINT NOT NULL,
    run_uuid   TEXT NOT NULL DEFAULT '',
    page_uid   BIGINT NOT NULL DEFAULT 0,
    language   BIGINT NOT NULL DEFAULT 0,
    workspace  BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);
CREATE INDEX cms_changes_created ON cms_changes(created_at);

-- +goose Down
DROP TABLE cms_changes;
