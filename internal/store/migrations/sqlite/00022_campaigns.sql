-- +goose Up
-- Campaigns: one process run over many pages, each page its own tour
-- started in the background as its owner would start it. A campaign's state
-- changes by one guarded UPDATE each (running, paused, cancelled, done);
-- its items are the pages (and languages) it covers, each started at most
-- once (UNIQUE campaign, page, language) and claimed by a guarded UPDATE.
-- Version 21 belongs to the costs of model calls, built beside this one.
CREATE TABLE campaigns (
    id                INTEGER PRIMARY KEY,
    owner_uid         BIGINT NOT NULL,
    skill_uid         BIGINT NOT NULL,
    configuration_uid BIGINT NOT NULL,
    root_page         BIGINT NOT NULL DEFAULT 0,
    depth             BIGINT NOT NULL DEFAULT 0,
    filter            TEXT NOT NULL DEFAULT '',
    languages         TEXT NOT NULL,
    budget            TEXT NOT NULL DEFAULT '',
    concurrency       BIGINT NOT NULL,
    state             TEXT NOT NULL,
    ticked_at         BIGINT NOT NULL DEFAULT 0,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE INDEX campaigns_owner ON campaigns(owner_uid, id);
CREATE INDEX campaigns_state ON campaigns(state);

CREATE TABLE campaign_items (
    id              INTEGER PRIMARY KEY,
    campaign_id     BIGINT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    position        BIGINT NOT NULL,
    page_uid        BIGINT NOT NULL,
    language        BIGINT NOT NULL,
    state           TEXT NOT NULL,
    reason          TEXT NOT NULL DEFAULT '',
    conversation_id BIGINT NOT NULL DEFAULT 0,
    started_at      BIGINT NOT NULL DEFAULT 0,
    finished_at     BIGINT NOT NULL DEFAULT 0,
    UNIQUE (campaign_id, page_uid, language)
);
CREATE INDEX campaign_items_state ON campaign_items(state, campaign_id);
CREATE INDEX campaign_items_conversation ON campaign_items(conversation_id);

-- +goose Down
DROP TABLE campaign_items;
DROP TABLE campaigns;
