-- +goose Up
-- Languages and skills move the settings generation too, so a process may
-- keep the names a conversation shows (a language's title, a skill's
-- identifier and name) in memory for one generation (store.GenCache; issue
-- 15: every read of a conversation read them again). The function of
-- migration 00006 does the bump.
CREATE TRIGGER languages_gen AFTER INSERT OR UPDATE OR DELETE ON languages
    FOR EACH STATEMENT EXECUTE FUNCTION be_groups_bump_generation();
CREATE TRIGGER skills_gen AFTER INSERT OR UPDATE OR DELETE ON skills
    FOR EACH STATEMENT EXECUTE FUNCTION be_groups_bump_generation();

-- +goose Down
DROP TRIGGER languages_gen ON languages;
DROP TRIGGER skills_gen ON skills;
