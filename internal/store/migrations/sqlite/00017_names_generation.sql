-- +goose Up
-- Languages and skills move the settings generation too, so a process may
-- keep the names a conversation shows (a language's title, a skill's
-- identifier and name) in memory for one generation (store.GenCache; issue
-- 15: every read of a conversation read them again).
-- +goose StatementBegin
CREATE TRIGGER languages_gen_insert AFTER INSERT ON languages
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER languages_gen_update AFTER UPDATE ON languages
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER languages_gen_delete AFTER DELETE ON languages
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER skills_gen_insert AFTER INSERT ON skills
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER skills_gen_update AFTER UPDATE ON skills
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER skills_gen_delete AFTER DELETE ON skills
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER languages_gen_insert;
DROP TRIGGER languages_gen_update;
DROP TRIGGER languages_gen_delete;
DROP TRIGGER skills_gen_insert;
DROP TRIGGER skills_gen_update;
DROP TRIGGER skills_gen_delete;
