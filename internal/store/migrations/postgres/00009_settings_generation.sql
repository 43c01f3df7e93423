-- +goose Up
-- The access generation becomes the settings generation: every change of
-- users, schema extensions, tool settings and configurations bumps it too,
-- so a process may keep what it derives from them in memory for one
-- generation (store.GenCache). The function of migration 00006 does the bump.
CREATE TRIGGER be_users_gen AFTER INSERT OR UPDATE OR DELETE ON be_users
    FOR EACH STATEMENT EXECUTE FUNCTION be_groups_bump_generation();
CREATE TRIGGER schema_tables_gen AFTER INSERT OR UPDATE OR DELETE ON schema_tables
    FOR EACH STATEMENT EXECUTE FUNCTION be_groups_bump_generation();
CREATE TRIGGER tool_settings_gen AFTER INSERT OR UPDATE OR DELETE ON tool_settings
    FOR EACH STATEMENT EXECUTE FUNCTION be_groups_bump_generation();
CREATE TRIGGER configurations_gen AFTER INSERT OR UPDATE OR DELETE ON configurations
    FOR EACH STATEMENT EXECUTE FUNCTION be_groups_bump_generation();

-- +goose Down
DROP TRIGGER be_users_gen ON be_users;
DROP TRIGGER schema_tables_gen ON schema_tables;
DROP TRIGGER tool_settings_gen ON tool_settings;
DROP TRIGGER configurations_gen ON configurations;
