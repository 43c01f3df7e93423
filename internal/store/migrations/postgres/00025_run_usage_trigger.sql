-- +goose Up
-- A run's usage row (run_usage) is written by the UPDATE that adds the
-- usage to the run, not by a statement (or a data-modifying WITH) of its
-- own: the guarded transition that carries a segment's tokens sets usage_at
-- to the time it records them, and this trigger inserts the row from the
-- tokens the UPDATE added — only for the row it changed, so only when the
-- transition won. The row is priced with the configuration's prices as they
-- are now, and names the conversation that waits on the run, if one does
-- (as migration 00023's rows were written).
ALTER TABLE runs ADD COLUMN usage_at BIGINT NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE FUNCTION runs_usage_row() RETURNS trigger AS $$
BEGIN
    INSERT INTO run_usage (run_uuid, conversation_id, configuration, model, initiator,
        prompt_tokens, completion_tokens, cost, created_at)
    SELECT NEW.uuid, COALESCE((SELECT MIN(v.id) FROM conversations v WHERE v.pending_run_uuid = NEW.uuid), 0),
        NEW.configuration, COALESCE(c.model, ''), NEW.initiator,
        NEW.prompt_tokens - OLD.prompt_tokens, NEW.completion_tokens - OLD.completion_tokens,
        ((NEW.prompt_tokens - OLD.prompt_tokens) * COALESCE(c.price_input_per_mtok, 0)
            + (NEW.completion_tokens - OLD.completion_tokens) * COALESCE(c.price_output_per_mtok, 0)) / 1000000.0,
        NEW.usage_at
    FROM (SELECT 1) AS one LEFT JOIN configurations c ON c.uid = NEW.configuration;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
CREATE TRIGGER runs_usage_row AFTER UPDATE OF prompt_tokens, completion_tokens ON runs
    FOR EACH ROW WHEN (NEW.prompt_tokens > OLD.prompt_tokens OR NEW.completion_tokens > OLD.completion_tokens)
    EXECUTE FUNCTION runs_usage_row();

-- +goose Down
DROP TRIGGER runs_usage_row ON runs;
DROP FUNCTION runs_usage_row();
ALTER TABLE runs DROP COLUMN usage_at;
