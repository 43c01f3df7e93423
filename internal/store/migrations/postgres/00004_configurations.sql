-- +goose Up
-- LLM configurations: provider, model, window, four-eyes, access, privacy.
-- api_key_sealed holds the provider key sealed by internal/secret ("v1:…"),
-- never the plaintext; '' means no key. allowed_groups is a JSON list of
-- be_groups uids (empty = administrators only); tool_groups a JSON list of
-- tool group names (empty = every group); script the JSON list of canned
-- replies of the script provider.
CREATE TABLE configurations (
    uid                     BIGINT PRIMARY KEY,
    identifier              TEXT NOT NULL UNIQUE,
    name                    TEXT NOT NULL DEFAULT '',
    active                  BOOLEAN NOT NULL DEFAULT FALSE,
    provider_type           TEXT NOT NULL CHECK (provider_type IN ('openai', 'demo', 'script')),
    base_url                TEXT NOT NULL DEFAULT '',
    api_key_sealed          TEXT NOT NULL DEFAULT '',
    model                   TEXT NOT NULL DEFAULT '',
    script                  TEXT NOT NULL DEFAULT '[]',
    context_window          BIGINT NOT NULL,
    max_output_tokens       BIGINT NOT NULL DEFAULT 0,
    require_second_approver BOOLEAN NOT NULL DEFAULT FALSE,
    privacy                 TEXT NOT NULL DEFAULT 'metadata' CHECK (privacy IN ('none', 'metadata', 'redacted', 'full')),
    system_prompt           TEXT NOT NULL DEFAULT '',
    allowed_groups          TEXT NOT NULL DEFAULT '[]',
    tool_groups             TEXT NOT NULL DEFAULT '[]',
    max_iterations          INTEGER NOT NULL DEFAULT 20,
    token_budget            BIGINT NOT NULL DEFAULT 0,
    updated_at              BIGINT NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE configurations;
