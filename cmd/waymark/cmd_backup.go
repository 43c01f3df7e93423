package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"waymark/internal/buildinfo"
	"waymark/internal/llmconfig"
	"waymark/internal/secret"
	"waymark/internal/store"
)

// backupArgs and restoreArgs are the usage lines of waymark backup and restore.
const (
	backupArgs  = "--to FILE [--db URL] [--data-dir DIR]"
	restoreArgs = "--from FILE --db URL [--data-dir DIR]"
)

// pgDumpHint names what backs up and restores a PostgreSQL installation.
const pgDumpHint = "back PostgreSQL up with pg_dump --format=custom --file FILE 'postgres://…' and restore with " +
	"pg_restore --dbname 'postgres://…' FILE into an empty database, keeping WAYMARK_SECRET_KEY or --data-dir's secret.key with the dump (README, Backup and restore)"

// cmdBackup writes one archive file holding a consistent copy of a SQLite
// database, taken while serve and workers keep running, and its secret key.
func cmdBackup(ctx context.Context, e *env, args []string) error {
	f := newFlags("backup", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	if len(f.Args()) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, f.Args()[0])
	}
	dbURL, to, dir := &f.DB, &f.BackupTo, &f.DataDir
	if *to == "" {
		return fmt.Errorf("%w: --to FILE is required", errUsage)
	}
	target, err := store.ParseURL(*dbURL)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if target.Dialect != store.SQLite {
		return fmt.Errorf("a PostgreSQL database is not copied by waymark: %s", pgDumpHint)
	}
	if _, err := os.Lstat(*to); err == nil {
		return fmt.Errorf("%s exists: backup writes a new file and replaces none", *to)
	}
	if st, err := os.Stat(target.Addr); err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return fmt.Errorf("no database at %s", target.Addr)
	}
	start := time.Now()
	db, err := store.OpenConfig(ctx, *dbURL, &store.Config{NoFastPaths: f.StoreNoFastPaths})
	if err != nil {
		return err
	}
	defer db.Close()
	keyText, keyNote, err := backupKey(ctx, db, dataDir(*dir, *dbURL), f.SecretKey)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(*to), ".waymark-backup-*")
	if err != nil {
		return fmt.Errorf("cannot write beside %s: %w", *to, errors.Unwrap(err))
	}
	defer os.RemoveAll(tmp)
	cp := filepath.Join(tmp, archiveDB)
	if err := db.Snapshot(ctx, cp); err != nil {
		return err
	}
	schema, check, err := store.SQLiteFileVersion(ctx, cp)
	if err != nil {
		return err
	}
	if check != "ok" {
		return fmt.Errorf("the copy of %s fails SQLite's check (%s); nothing written", target.Addr, check)
	}
	mod := buildinfo.Read(version).Version
	m := manifest{Format: archiveFormat, Waymark: mod, Dialect: string(store.SQLite), Schema: schema, Created: start.UTC().Truncate(time.Second)}
	part := filepath.Join(tmp, "archive")
	out, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	werr := writeArchive(out, m, cp, keyText)
	if werr == nil {
		werr = out.Sync()
	}
	if err := errors.Join(werr, out.Close()); err != nil {
		return fmt.Errorf("write %s: %w", *to, err)
	}
	// A link publishes the archive complete or not at all, and never
	// replaces a file that appeared meanwhile.
	if err := os.Link(part, *to); err != nil {
		return fmt.Errorf("write %s: %w", *to, errors.Unwrap(err))
	}
	st, err := os.Stat(*to)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "backed up %s (schema version %d) to %s: %d bytes, %s, in %v\n",
		target.Addr, schema, *to, st.Size(), keyNote, time.Since(start).Round(time.Millisecond))
	return nil
}

// backupKey returns the text of the key file to put into the archive and a
// note saying where it came from. A database that holds nothing sealed may
// go without a key; one that does is refused without it.
func backupKey(ctx context.Context, db *store.DB, dataDir, envKey string) ([]byte, string, error) {
	k, err := secret.Find(dataDir, envKey)
	if errors.Is(err, secret.ErrNoKey) {
		sealed, err := secret.Sealed(ctx, db, func(ctx context.Context) (string, bool, error) { return llmconfig.FirstSealedKey(ctx, db) })
		if err != nil {
			return nil, "", err
		}
		if sealed {
			return nil, "", fmt.Errorf("%w: %w; give --data-dir or %s so that the backup holds it", secret.ErrKeyMissing, err, secret.EnvKey)
		}
		return nil, "no secret key (nothing sealed yet)", nil
	}
	if err != nil {
		return nil, "", err
	}
	return []byte(secret.Encode(k.Bytes)), "secret key from " + k.Source + " included", nil
}

// cmdRestore restores an archive of cmdBackup into a new, empty location:
// the database file and, beside it or in --data-dir, its secret.key. It
// checks the whole archive, the copy and the key before it writes either,
// and writes nothing when a check fails.
func cmdRestore(ctx context.Context, e *env, args []string) error {
	f := newFlags("restore", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	if len(f.Args()) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, f.Args()[0])
	}
	dbURL, from, dir := &f.DB, &f.RestoreFrom, &f.DataDir
	if *from == "" {
		return fmt.Errorf("%w: --from FILE is required", errUsage)
	}
	target, err := store.ParseURL(*dbURL)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if target.Dialect != store.SQLite {
		return fmt.Errorf("a PostgreSQL database is not restored by waymark: %s", pgDumpHint)
	}
	path := target.Addr
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return fmt.Errorf("the folder %s does not exist; create it first", filepath.Dir(path))
	}
	if err := wantEmpty(path); err != nil {
		return err
	}
	in, err := os.Open(*from)
	if err != nil {
		return fmt.Errorf("read archive: %w", err)
	}
	defer in.Close()
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".waymark-restore-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", filepath.Dir(path), errors.Unwrap(err))
	}
	defer os.RemoveAll(tmp)
	cp := filepath.Join(tmp, archiveDB)
	m, keyText, err := readArchive(in, cp)
	if err != nil {
		return fmt.Errorf("%s %w", *from, err)
	}
	if m.Dialect != string(store.SQLite) {
		return fmt.Errorf("%s holds a %s database; waymark restore restores SQLite", *from, m.Dialect)
	}
	newest, err := store.NewestVersion(store.SQLite)
	if err != nil {
		return err
	}
	if m.Schema > newest {
		return fmt.Errorf("%s holds schema version %d, newer than this waymark knows (%d): restore with waymark %s or later", *from, m.Schema, newest, m.Waymark)
	}
	if _, check, err := store.SQLiteFileVersion(ctx, cp); err != nil || check != "ok" {
		return fmt.Errorf("%s %w (the database copy fails SQLite's check: %v %s)", *from, errDamaged, err, check)
	}
	keys := dataDir(*dir, *dbURL)
	key, writeKey, err := restoreKey(keyText, keys, *from, f.SecretKey)
	if err != nil {
		return err
	}
	if err := checkRestoredKey(ctx, cp, key, *from, keys); err != nil {
		return err
	}
	// Everything is checked: write the key, then the database.
	keyNote := "key from " + secret.EnvKey
	if key == nil {
		keyNote = "no key: nothing is sealed yet, the first start generates one"
	} else if writeKey {
		p, err := secret.Write(keys, key)
		if err != nil {
			return err
		}
		keyNote = "key written to " + p
	} else if f.SecretKey == "" {
		keyNote = "key at " + secret.KeyPath(keys)
	}
	if err := publish(cp, path); err != nil {
		if writeKey {
			os.Remove(secret.KeyPath(keys))
		}
		return err
	}
	fmt.Fprintf(e.stdout, "restored %s (schema version %d, backed up %s by waymark %s) to %s; %s\n",
		*from, m.Schema, m.Created.Format(time.RFC3339), m.Waymark, path, keyNote)
	return nil
}

// wantEmpty refuses a database path that holds data: an existing non-empty
// file, or a write-ahead log of one.
func wantEmpty(path string) error {
	for _, p := range []string{path, path + "-wal"} {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() || st.Size() > 0 {
			return fmt.Errorf("%s exists and holds data: restore into a new, empty location", path)
		}
	}
	return nil
}

// restoreKey decides the key of the restored database: WAYMARK_SECRET_KEY
// when set; else the archive's, to be written unless the data folder holds
// the same key already; else the data folder's key file. A different key in
// the data folder, or none anywhere, is refused.
func restoreKey(keyText []byte, dataDir, from, env string) (key []byte, write bool, err error) {
	var archived []byte
	if keyText != nil {
		if archived, err = secret.Parse(string(keyText)); err != nil {
			return nil, false, fmt.Errorf("%s %w (its secret.key: %w)", from, errDamaged, err)
		}
	}
	if env != "" {
		k, err := secret.Find("", env)
		if err != nil {
			return nil, false, err
		}
		if archived != nil && !bytes.Equal(archived, k.Bytes) {
			return nil, false, fmt.Errorf("%s is set to another key than the one %s holds: unset it to use the archive's", secret.EnvKey, from)
		}
		return k.Bytes, false, nil
	}
	if dataDir == "" {
		return nil, false, fmt.Errorf("restore: no folder for the secret key: give --data-dir")
	}
	existing, err := secret.Find(dataDir, "")
	switch {
	case errors.Is(err, secret.ErrNoKey) && archived != nil:
		return archived, true, nil
	case errors.Is(err, secret.ErrNoKey):
		return nil, false, nil // checkRestoredKey refuses it when the copy holds sealed values
	case err != nil:
		return nil, false, err
	case archived != nil && !bytes.Equal(archived, existing.Bytes):
		return nil, false, fmt.Errorf("%s holds another key than the one %s holds: restore into another --data-dir", existing.Source, from)
	}
	return existing.Bytes, false, nil
}

// checkRestoredKey refuses a key that does not open the database copy, or
// no key (nil) for a copy that holds sealed values, before either is
// written. keys is the data folder, for the message.
func checkRestoredKey(ctx context.Context, cp string, key []byte, from, keys string) error {
	db, err := store.Open(ctx, "sqlite:"+cp)
	if err != nil {
		return err
	}
	legacy := func(ctx context.Context) (string, bool, error) { return llmconfig.FirstSealedKey(ctx, db) }
	if key == nil {
		var sealed bool
		if sealed, err = secret.Sealed(ctx, db, legacy); err == nil && sealed {
			err = fmt.Errorf("%s holds no secret key and none is given, but its database holds values sealed with one: "+
				"put the key in %s or set %s; nothing written", from, secret.KeyPath(keys), secret.EnvKey)
		}
	} else {
		var box *secret.Box
		if box, err = secret.New(key); err == nil {
			if err = secret.CheckKey(ctx, db, box, "the restore", legacy); err != nil {
				err = fmt.Errorf("%s: %w", from, err)
			}
		}
	}
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// Closing the last connection folds the write-ahead log into the file.
	if st, err := os.Stat(cp + "-wal"); err == nil && st.Size() > 0 {
		return fmt.Errorf("restore: the copy's write-ahead log was not folded in; nothing written")
	}
	return nil
}

// publish moves the checked copy to path: a link where path does not exist
// (so a file that appeared meanwhile is never replaced), a rename over an
// empty file.
func publish(cp, path string) error {
	err := os.Link(cp, path)
	if errors.Is(err, fs.ErrExist) {
		if err := wantEmpty(path); err != nil {
			return err
		}
		err = os.Rename(cp, path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
