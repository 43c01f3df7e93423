-- +goose Up
-- The check value of the installation's secret key: a
-- constant sealed with the key, so that a process started with another key
-- refuses to start instead of failing every run whose provider key it cannot
-- open.
CREATE TABLE secret_key_check (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    sealed TEXT NOT NULL
);

-- +goose Down
DROP TABLE secret_key_check;
