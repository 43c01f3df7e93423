-- +goose Up
-- The access generation becomes the settings generation: every change of
-- users, schema extensions, tool settings and configurations bumps it too,
-- so a process may keep what it derives from them in memory for one
-- generation (store.GenCache).
-- +goose StatementBegin
CREATE TRIGGER be_users_gen_insert AFTER INSERT ON be_users
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER be_users_gen_update AFTER UPDATE ON be_users
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER be_users_gen_delete AFTER DELETE ON be_users
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER schema_tables_gen_insert AFTER INSERT ON schema_tables
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER schema_tables_gen_update AFTER UPDATE ON schema_tables
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER schema_tables_gen_delete AFTER DELETE ON schema_tables
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER tool_settings_gen_insert AFTER INSERT ON tool_settings
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER tool_settings_gen_update AFTER UPDATE ON tool_settings
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER tool_settings_gen_delete AFTER DELETE ON tool_settings
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER configurations_gen_insert AFTER INSERT ON configurations
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER configurations_gen_update AFTER UPDATE ON configurations
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER configurations_gen_delete AFTER DELETE ON configurations
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER be_users_gen_insert;
DROP TRIGGER be_users_gen_update;
DROP TRIGGER be_users_gen_delete;
DROP TRIGGER schema_tables_gen_insert;
DROP TRIGGER schema_tables_gen_update;
DROP TRIGGER schema_tables_gen_delete;
DROP TRIGGER tool_settings_gen_insert;
DROP TRIGGER tool_settings_gen_update;
DROP TRIGGER tool_settings_gen_delete;
DROP TRIGGER configurations_gen_insert;
DROP TRIGGER configurations_gen_update;
DROP TRIGGER configurations_gen_delete;
