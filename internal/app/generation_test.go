package app_test

import (
	"context"
	"slices"
	"testing"

	_ "waymark/internal/app" // links every package that keeps values for a settings generation
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Every table from which the linked packages keep something in memory for
// one settings generation (store.NewGenCache, store.GenerationTables) has
// triggers that move the generation on insert, update and delete, on both
// dialects. The list is the packages' own registrations, not a copy.
func TestEveryTableKeptForAGenerationMovesIt(t *testing.T) {
	tables := store.RegisteredGenerationTables()
	for _, want := range []string{"api_tokens", "be_groups", "be_users", "configurations", "schema_tables", "tool_settings"} {
		if !slices.Contains(tables, want) {
			t.Errorf("registered tables %q lack %s", tables, want)
		}
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		missing, err := store.MissingGenerationTriggers(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		if len(missing) > 0 {
			t.Errorf("changes that do not move the settings generation: %q", missing)
		}
	})
}
