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
CREATE TRIGGER be_groups_gen_insert AFTER INSERT ON be_groups
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER be_groups_gen_update AFTER UPDATE ON be_groups
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER be_groups_gen_delete AFTER DELETE ON be_groups
BEGIN
    UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER be_groups_gen_delete;
DROP TRIGGER be_groups_gen_update;
DROP TRIGGER be_groups_gen_insert;
DROP TABLE access_generation;
