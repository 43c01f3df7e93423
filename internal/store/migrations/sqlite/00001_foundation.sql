-- +goose Up
-- Foundation: languages, schema extensions, backend users and groups,
-- credentials, records (pages and content) with their edit history.
CREATE TABLE languages (
    uid    BIGINT PRIMARY KEY,
    title  TEXT NOT NULL,
    locale TEXT NOT NULL
);

-- Fixture extensions of the built-in table schemas (JSON of content.TableDef).
CREATE TABLE schema_tables (
    name       TEXT PRIMARY KEY,
    definition TEXT NOT NULL
);

CREATE TABLE be_groups (
    uid                BIGINT PRIMARY KEY,
    title              TEXT NOT NULL,
    tables_select      TEXT NOT NULL DEFAULT '[]',
    tables_modify      TEXT NOT NULL DEFAULT '[]',
    non_exclude_fields TEXT NOT NULL DEFAULT '[]',
    languages          TEXT NOT NULL DEFAULT '[]',
    mounts             TEXT NOT NULL DEFAULT '[]',
    subgroups          TEXT NOT NULL DEFAULT '[]',
    grants             TEXT NOT NULL DEFAULT '[]'
);

CREATE TABLE be_users (
    uid              BIGINT PRIMARY KEY,
    username         TEXT NOT NULL UNIQUE,
    password_hash    TEXT NOT NULL DEFAULT '',
    admin            BOOLEAN NOT NULL DEFAULT FALSE,
    disabled         BOOLEAN NOT NULL DEFAULT FALSE,
    service_account  BOOLEAN NOT NULL DEFAULT FALSE,
    backend_language TEXT NOT NULL DEFAULT 'en',
    group_uids       TEXT NOT NULL DEFAULT '[]',
    languages        TEXT NOT NULL DEFAULT '[]',
    mounts           TEXT NOT NULL DEFAULT '[]',
    grants           TEXT NOT NULL DEFAULT '[]'
);

-- API tokens: lookup is a short prefix of sha256(token) to find candidates,
-- hash is the bcrypt hash that proves the token.
CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY,
    user_uid     BIGINT NOT NULL REFERENCES be_users(uid) ON DELETE CASCADE,
    lookup       TEXT NOT NULL,
    hash         TEXT NOT NULL,
    label        TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL
);
CREATE INDEX api_tokens_lookup ON api_tokens(lookup);

CREATE TABLE sessions (
    id_hash    TEXT PRIMARY KEY,
    user_uid   BIGINT NOT NULL REFERENCES be_users(uid) ON DELETE CASCADE,
    csrf       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- Every CMS record, pages included. Page permission columns are used for pages only.
CREATE TABLE records (
    tbl             TEXT NOT NULL,
    uid             BIGINT NOT NULL,
    pid             BIGINT NOT NULL DEFAULT 0,
    language        BIGINT NOT NULL DEFAULT 0,
    l10n_parent     BIGINT NOT NULL DEFAULT 0,
    deleted         BOOLEAN NOT NULL DEFAULT FALSE,
    workspace       BIGINT NOT NULL DEFAULT 0,
    owner_uid       BIGINT NOT NULL DEFAULT 0,
    group_uid       BIGINT NOT NULL DEFAULT 0,
    perms_user      INTEGER NOT NULL DEFAULT 0,
    perms_group     INTEGER NOT NULL DEFAULT 0,
    perms_everybody INTEGER NOT NULL DEFAULT 0,
    fields          TEXT NOT NULL DEFAULT '{}',
    updated_at      BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (tbl, uid)
);
CREATE INDEX records_pid ON records(tbl, pid);

CREATE TABLE record_history (
    id         INTEGER PRIMARY KEY,
    tbl        TEXT NOT NULL,
    uid        BIGINT NOT NULL,
    field      TEXT NOT NULL,
    old_value  TEXT NOT NULL,
    new_value  TEXT NOT NULL,
    user_uid   BIGINT NOT NULL,
    run_uuid   TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);
CREATE INDEX record_history_record ON record_history(tbl, uid);

-- +goose Down
DROP TABLE record_history;
DROP TABLE records;
DROP TABLE sessions;
DROP TABLE api_tokens;
DROP TABLE be_users;
DROP TABLE be_groups;
DROP TABLE schema_tables;
DROP TABLE languages;
