-- +goose Up
-- A skill's name in the UI languages (a JSON object {"en": "…", "de": "…"},
-- '' for none): the site administrator's labels, set by the fixture import,
-- shown to an editor whose UI language has one instead of the version's name.
-- They are not part of the version or its digest.
ALTER TABLE skills ADD COLUMN names TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE skills DROP COLUMN names;
