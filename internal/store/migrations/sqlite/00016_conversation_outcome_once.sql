-- +goose Up
-- A decided card is settled once (ADR-022; the decision's job and
-- the recovery of a lost job may both settle it): its outcome is keyed by the
-- conversation, the run and the messages it came after, so the settlement
-- that commits second records nothing — on PostgreSQL too, where two
-- transactions could both count none before either inserted. Duplicates an
-- older version may have stored are dropped first, the first kept.
DELETE FROM conversation_outcomes WHERE id NOT IN (
  SELECT MIN(id) FROM conversation_outcomes GROUP BY conversation_id, run_uuid, after_message);
CREATE UNIQUE INDEX conversation_outcomes_once ON conversation_outcomes (conversation_id, run_uuid, after_message);

-- +goose Down
DROP INDEX conversation_outcomes_once;
