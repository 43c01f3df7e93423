-- +goose Up
-- A counter that every change of be_groups bumps, so a process may keep the
-- groups in memory and still read them as stored now: it re-reads them when
-- the counter it reads together with the user has moved.
CREATE TABLE access_generation (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    gen BIGINT NOT NULL
);
INSERT INTO access_generation (id, gen) VALUES (1, 1);

-- +goose StatementBegin
CREATE FUNCTION be_groups_bump_generation() RETURNS trigger AS $$
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
CREATE TRIGGER be_groups_gen AFTER INSERT OR UPDATE OR DELETE ON be_groups
    FOR EACH STATEMENT EXECUTE FUNCTION be_groups_bump_generation();

-- +goose Down
DROP TRIGGER be_groups_gen ON be_groups;
DROP FUNCTION be_groups_bump_generation();
DROP TABLE access_generation;
