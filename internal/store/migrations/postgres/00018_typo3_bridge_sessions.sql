-- +goose Up
-- A session opened through TYPO3 (a ticket of the TYPO3 extension) names the
-- TYPO3 backend session it came from, as TYPO3's session backend stores its
-- identifier: it ends when that one ends (logout, a password change, an
-- administrator ending sessions). Empty for a password login.
ALTER TABLE sessions ADD COLUMN typo3_session TEXT NOT NULL DEFAULT '';
-- Tickets of the TYPO3 extension are single-use: each nonce redeemed is kept
-- until its ticket has expired anyway.
CREATE TABLE typo3_tickets (
    nonce      TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE typo3_tickets;
ALTER TABLE sessions DROP COLUMN typo3_session;
