package store

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/pressly/goose/v3"
)

// ErrUnknownVersion is returned by MigrateTo for a version that is not one
// of this binary's migrations, or is above its newest.
var ErrUnknownVersion = errors.New("unknown schema version")

// Migration is one embedded migration and whether the database has it.
type Migration struct {
	Version int64
	Name    string // the file name without its version and extension: "conversations"
	Applied bool
}

// Schema is what MigrationStatus reports: every embedded migration in
// order, the database's version and the newest version this binary knows.
type Schema struct {
	Migrations []Migration
	Current    int64
	Newest     int64
}

// MigrationStatus reads which embedded migrations the database has, under
// the migration lock so that it never reads a migration half done. A
// database newer than this binary is refused with ErrSchemaNewer: its
// status is the newer binary's to tell.
func (db *DB) MigrationStatus(ctx context.Context) (Schema, error) {
	p, err := db.provider()
	if err != nil {
		return Schema{}, fmt.Errorf("migrations: %w", err)
	}
	var s Schema
	err = db.WithMigrationLock(ctx, func(ctx context.Context) error {
		if err := db.checkNotNewer(ctx, p); err != nil {
			return err
		}
		st, err := p.Status(ctx)
		if err != nil {
			return fmt.Errorf("migration status of %s: %w", db.Addr, err)
		}
		for _, m := range st {
			s.Migrations = append(s.Migrations, Migration{Version: m.Source.Version, Name: migrationName(m.Source.Path),
				Applied: m.State == goose.StateApplied})
			if m.State == goose.StateApplied {
				s.Current = max(s.Current, m.Source.Version)
			}
			s.Newest = max(s.Newest, m.Source.Version)
		}
		return nil
	})
	return s, err
}

// MigrateTo brings the schema to version, up or down, under the migration
// lock (WithMigrationLock): a rollback to the schema of an older waymark
// runs the down migrations of every newer one, newest first. version must
// be one of the embedded migrations; a database newer than this binary is
// refused with ErrSchemaNewer (it lacks the down migrations for it).
// It returns the versions it applied (up) or rolled back (down), in order.
func (db *DB) MigrateTo(ctx context.Context, version int64) (done []int64, down bool, err error) {
	defer db.forgetMovers() // the schema's triggers may have changed
	p, err := db.provider()
	if err != nil {
		return nil, false, fmt.Errorf("migrations: %w", err)
	}
	srcs := p.ListSources()
	known := false
	var newest int64
	for _, s := range srcs {
		known = known || s.Version == version
		newest = max(newest, s.Version)
	}
	if version > newest {
		return nil, false, fmt.Errorf("%w %d: the newest this waymark knows is %d", ErrUnknownVersion, version, newest)
	}
	if !known {
		return nil, false, fmt.Errorf("%w %d: not one of this waymark's migrations (waymark migrate --status lists them)", ErrUnknownVersion, version)
	}
	err = db.WithMigrationLock(ctx, func(ctx context.Context) error {
		if err := db.checkNotNewer(ctx, p); err != nil {
			return err
		}
		current, err := p.GetDBVersion(ctx)
		if err != nil {
			return fmt.Errorf("migrate %s: read schema version: %w", db.Addr, err)
		}
		var res []*goose.MigrationResult
		if version >= current {
			res, err = p.UpTo(ctx, version)
		} else {
			down = true
			res, err = p.DownTo(ctx, version)
		}
		var partial *goose.PartialError
		if errors.As(err, &partial) {
			res = partial.Applied
		}
		for _, r := range res {
			if r.Error == nil {
				done = append(done, r.Source.Version)
			}
		}
		if err != nil {
			return fmt.Errorf("migrate %s to %d: %w", db.Addr, version, err)
		}
		return nil
	})
	return done, down, err
}

// migrationName is "conversations" of "00008_conversations.sql".
func migrationName(p string) string {
	base := strings.TrimSuffix(path.Base(p), path.Ext(p))
	if _, name, ok := strings.Cut(base, "_"); ok {
		return name
	}
	return base
}
