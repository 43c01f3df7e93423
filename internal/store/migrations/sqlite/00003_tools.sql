-- +goose Up
-- Global tool state: a row overrides the tool's built-in default (enabled or not).
CREATE TABLE tool_settings (
    name    TEXT PRIMARY KEY,
    enabled BOOLEAN NOT NULL
);

-- +goose Down
DROP TABLE tool_settings;
