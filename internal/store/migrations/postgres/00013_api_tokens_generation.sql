-- +goose Up
-- Every change of api_tokens moves the settings generation too, so that the
-- authenticator may remember verified tokens for one generation and a
-- deleted token is refused at once.
CREATE TRIGGER api_tokens_gen AFTER INSERT OR UPDATE OR DELETE ON api_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION be_groups_bump_generation();

-- +goose Down
DROP TRIGGER api_tokens_gen ON api_tokens;
