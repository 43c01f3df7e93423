package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"waymark/internal/llmconfig"
	"waymark/internal/secret"
	"waymark/internal/store"
)

// loadKey finds the secret key (secret.Find) and generates one only for a
// database that holds nothing sealed yet: a database restored without its
// key (or started with the wrong data folder) is refused with one line
// naming the missing file, and nothing is written — a new key file there
// would open nothing in the database and hide the real fix.
func loadKey(ctx context.Context, db *store.DB, dataDir, envKey string, legacy func(context.Context) (string, bool, error)) (secret.Key, error) {
	k, err := secret.Find(dataDir, envKey)
	if !errors.Is(err, secret.ErrNoKey) {
		return k, err
	}
	sealed, serr := secret.Sealed(ctx, db, legacy)
	if serr != nil {
		return secret.Key{}, serr
	}
	if sealed {
		return secret.Key{}, fmt.Errorf("%w: no %s and %s not set; put the %s of this database's backup there "+
			"(waymark restore writes it) or set %s", secret.ErrKeyMissing, k.Source, secret.EnvKey, secret.KeyFile, secret.EnvKey)
	}
	return secret.Generate(dataDir)
}

// openBox opens the secret box of cfg.Key, or of the key loadKey finds
// (generating one only for a database that holds nothing sealed yet), and
// checks that it opens what the database holds sealed.
func openBox(ctx context.Context, db *store.DB, cfg Config, log *slog.Logger) (*secret.Box, error) {
	key, source := cfg.Key, "the configuration"
	firstSealed := func(ctx context.Context) (string, bool, error) { return llmconfig.FirstSealedKey(ctx, db) }
	if key == nil {
		k, err := loadKey(ctx, db, cfg.DataDir, cfg.SecretKey, firstSealed)
		if err != nil {
			return nil, err
		}
		if k.Generated {
			log.Warn("generated a new secret key", "path", k.Source)
		}
		key, source = k.Bytes, k.Source
	}
	box, err := secret.New(key)
	if err != nil {
		return nil, err
	}
	if err := secret.CheckKey(ctx, db, box, source, firstSealed); err != nil {
		return nil, err
	}
	return box, nil
}
