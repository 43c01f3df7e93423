package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"

	"waymark/internal/queue"
	"waymark/internal/store"
)

// migrateArgs is the usage line of waymark migrate.
const migrateArgs = "[--db URL] [--to VERSION | --status]"

// cmdMigrate applies every migration (no flag), brings the schema to one
// version up or down (--to, the rollback of an upgrade), or lists the
// migrations and which the database has (--status).
func cmdMigrate(ctx context.Context, e *env, args []string) error {
	f := newFlags("migrate", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	if len(f.Args()) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, f.Args()[0])
	}
	to, status := &f.MigrateTo, &f.MigrateStatus
	if *to != "" && *status {
		return fmt.Errorf("%w: --to and --status exclude each other", errUsage)
	}
	var version int64
	if *to != "" {
		v, err := strconv.ParseInt(*to, 10, 64)
		if err != nil || v < 1 {
			return fmt.Errorf("%w: --to %q: want a schema version (a number --status lists)", errUsage, *to)
		}
		version = v
	}
	if *to == "" && !*status {
		return migrateAll(ctx, e, f)
	}
	if _, err := store.ParseURL(f.DB); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	db, err := store.OpenConfig(ctx, f.DB, &store.Config{NoFastPaths: f.StoreNoFastPaths})
	if err != nil {
		return err
	}
	defer db.Close()
	if *status {
		return printMigrations(ctx, e, db)
	}
	done, down, err := db.MigrateTo(ctx, version)
	if errors.Is(err, store.ErrUnknownVersion) {
		return fmt.Errorf("%w: --to: %w", errUsage, err)
	}
	if err != nil {
		return err
	}
	switch {
	case len(done) == 0:
		fmt.Fprintf(e.stdout, "schema of %s is at version %d already\n", db.Addr, version)
	case down:
		fmt.Fprintf(e.stdout, "schema of %s rolled back to version %d (undid %v)\n", db.Addr, version, done)
	default:
		fmt.Fprintf(e.stdout, "schema of %s migrated up to version %d (applied %v)\n", db.Addr, version, done)
	}
	return nil
}

// migrateAll applies every migration of the store and the queue.
func migrateAll(ctx context.Context, e *env, f *flags) error {
	db, err := f.openDB(ctx, f.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	q, err := queue.New(db, &queue.Config{})
	if err != nil {
		return err
	}
	if err := q.Migrate(ctx); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "migrations current on %s\n", db.Addr)
	return nil
}

// printMigrations writes one line per migration and a summary.
func printMigrations(ctx context.Context, e *env, db *store.DB) error {
	s, err := db.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "VERSION\tNAME\tSTATE")
	for _, m := range s.Migrations {
		state := "pending"
		if m.Applied {
			state = "applied"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\n", m.Version, m.Name, state)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "schema version %d on %s; this waymark knows up to %d\n", s.Current, db.Addr, s.Newest)
	return nil
}
