package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"waymark/internal/store"
)

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("waymark "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	return fs
}

// dbFlag defines --db with the default from WAYMARK_DB.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", cmp.Or(os.Getenv("WAYMARK_DB"), store.DefaultURL), "database: sqlite:PATH or postgres://…")
}

// parse parses args and turns flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return fmt.Errorf("%w: %s", errUsage, strings.TrimSpace(err.Error()))
	}
	return nil
}

// openDB opens and migrates the database named by --db.
func openDB(ctx context.Context, raw string) (*store.DB, error) {
	if _, err := store.ParseURL(raw); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	db, err := store.Open(ctx, raw)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}
