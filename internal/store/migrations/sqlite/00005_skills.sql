-- +goose Up
-- Skills (ADR-214): sources with a trust level, skills with their digested
-- fields, the edit history of backend skills, approvals as snapshots of one
-- digest, the append-only audit trail, and attachments to configurations.
-- The trust thresholds (instruction threshold, admission floor) are settings
-- of the skill.Store (skill.Config), not rows.

-- type: backend (authored in Waymark) or directory (a folder on disk, path).
CREATE TABLE skill_sources (
    uid         BIGINT PRIMARY KEY,
    type        TEXT NOT NULL CHECK (type IN ('backend', 'directory')),
    title       TEXT NOT NULL,
    path        TEXT NOT NULL DEFAULT '',
    trust_level TEXT NOT NULL CHECK (trust_level IN ('untrusted', 'community', 'verified', 'first_party')),
    enabled     BOOLEAN NOT NULL DEFAULT TRUE,
    updated_at  BIGINT NOT NULL DEFAULT 0
);

-- allowed_tools is 'null' (no declaration) or a sorted JSON list; digest is
-- the version digest of the row's fields, kept by every write of the store.
-- The long texts come last so reads of the short columns skip their overflow pages.
-- AUTOINCREMENT: a uid is never reused, so old approvals never match a new skill.
CREATE TABLE skills (
    uid              INTEGER PRIMARY KEY AUTOINCREMENT,
    source_uid       BIGINT NOT NULL REFERENCES skill_sources(uid),
    identifier       TEXT NOT NULL,
    name             TEXT NOT NULL,
    description      TEXT NOT NULL DEFAULT '',
    support          TEXT NOT NULL DEFAULT '',
    allowed_tools    TEXT NOT NULL DEFAULT 'null',
    process          BOOLEAN NOT NULL DEFAULT FALSE,
    digest           TEXT NOT NULL,
    enabled          BOOLEAN NOT NULL DEFAULT FALSE,
    orphaned         BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at       BIGINT NOT NULL DEFAULT 0,
    raw_front_matter TEXT NOT NULL DEFAULT '',
    body             TEXT NOT NULL DEFAULT '',
    UNIQUE (source_uid, identifier)
);

-- Edit history of backend skills: one row per stored version (JSON of skill.Version).
CREATE TABLE skill_history (
    id         INTEGER PRIMARY KEY,
    skill_uid  BIGINT NOT NULL,
    user_uid   BIGINT NOT NULL,
    version    TEXT NOT NULL,
    digest     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX skill_history_skill ON skill_history(skill_uid, id);

-- One row per approval event of a digest; the latest row of (skill, source,
-- digest) decides. revoked_at = 0 means not revoked. A revocation marks every
-- unrevoked row of the digest, so the latest row is unrevoked exactly when
-- some row is. No foreign keys: the snapshots outlive the skill.
CREATE TABLE skill_approvals (
    id            INTEGER PRIMARY KEY,
    skill_uid     BIGINT NOT NULL,
    source_uid    BIGINT NOT NULL,
    digest        TEXT NOT NULL,
    name          TEXT NOT NULL,
    description   TEXT NOT NULL,
    support       TEXT NOT NULL,
    allowed_tools TEXT NOT NULL,
    process       BOOLEAN NOT NULL,
    trust_level   TEXT NOT NULL,
    approved_by   BIGINT NOT NULL,
    approved_at   BIGINT NOT NULL,
    revoked_by    BIGINT NOT NULL DEFAULT 0,
    revoked_at    BIGINT NOT NULL DEFAULT 0,
    body          TEXT NOT NULL
);
CREATE INDEX skill_approvals_triple ON skill_approvals(skill_uid, source_uid, digest, id);

-- Append-only: rows are inserted, never updated or deleted.
CREATE TABLE skill_audit (
    id         INTEGER PRIMARY KEY,
    event      TEXT NOT NULL,
    skill_uid  BIGINT NOT NULL DEFAULT 0,
    source_uid BIGINT NOT NULL DEFAULT 0,
    digest     TEXT NOT NULL DEFAULT '',
    actor_uid  BIGINT NOT NULL DEFAULT 0,
    detail     TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);
CREATE INDEX skill_audit_skill ON skill_audit(skill_uid, id);

CREATE TABLE skill_attachments (
    configuration_uid BIGINT NOT NULL REFERENCES configurations(uid) ON DELETE CASCADE,
    skill_uid         BIGINT NOT NULL REFERENCES skills(uid) ON DELETE CASCADE,
    load_mode         TEXT NOT NULL CHECK (load_mode IN ('always', 'on_demand')),
    PRIMARY KEY (configuration_uid, skill_uid)
);
CREATE INDEX skill_attachments_skill ON skill_attachments(skill_uid);

-- +goose Down
DROP TABLE skill_attachments;
DROP TABLE skill_audit;
DROP TABLE skill_approvals;
DROP TABLE skill_history;
DROP TABLE skills;
DROP TABLE skill_sources;
