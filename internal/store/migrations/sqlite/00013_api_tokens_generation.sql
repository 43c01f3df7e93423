-- +goose Up
-- Every change of api_tokens moves the settings generation too, so that the
-- authenticator may remember verified tokens for one generation and a
-- deleted token is refused at once.
-- +goose StatementBegin
CREATE TRIGGER api_tokens_gen_insert AFTER INSERT ON api_tokens
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER api_tokens_gen_update AFTER UPDATE ON api_tokens
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER api_tokens_gen_delete AFTER DELETE ON api_tokens
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER api_tokens_gen_insert;
DROP TRIGGER api_tokens_gen_update;
DROP TRIGGER api_tokens_gen_delete;
