-- +goose Up
-- Beside TYPO3 a session of a password login and an API token carry a mark
-- of the TYPO3 password hash the user had when they were made: a password
-- changed in TYPO3 since ends them at their next request (TYPO3 ends every
-- backend session of a user whose password changes). Empty: no mark
-- (Waymark's own users, whose password changes end sessions themselves).
ALTER TABLE sessions ADD COLUMN password_mark TEXT NOT NULL DEFAULT '';
ALTER TABLE api_tokens ADD COLUMN password_mark TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE api_tokens DROP COLUMN password_mark;
ALTER TABLE sessions DROP COLUMN password_mark;
