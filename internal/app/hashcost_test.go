package app_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"waymark/internal/access"
	"waymark/internal/app"
	"waymark/internal/auth"
	"waymark/internal/fixture"
	"waymark/internal/store/storetest"
)

// The bcrypt cost is the wiring's: an import hashes at
// app.Config.HashCost, 0 is auth.DefaultCost, and a cost bcrypt would not
// take as given fails New before anything is wired.
func TestTheWiringChoosesTheHashCost(t *testing.T) {
	ctx := context.Background()
	key := bytes.Repeat([]byte{7}, 32)
	for _, c := range []struct{ give, want int }{{auth.MinCost, bcrypt.MinCost}, {0, auth.DefaultCost}} {
		db := storetest.SQLite(t)
		a, err := app.New(ctx, db, &app.Config{Key: key, HashCost: c.give})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fixture.Import(ctx, db, []byte("users: [{uid: 7, username: hans, password: geheim-123}]"), "u.yaml", a.FixtureOptions()); err != nil {
			t.Fatal(err)
		}
		a.Close()
		h, err := access.PasswordHash(ctx, db, 7)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := bcrypt.Cost([]byte(h)); err != nil || got != c.want {
			t.Errorf("HashCost %d: the imported password has cost %d (%v), want %d", c.give, got, err, c.want)
		}
	}
	for _, bad := range []int{-1, 3, 32} {
		_, err := app.New(ctx, storetest.SQLite(t), &app.Config{Key: key, HashCost: bad})
		if err == nil || !strings.Contains(err.Error(), "HashCost") {
			t.Errorf("HashCost %d: New = %v, want an error naming HashCost", bad, err)
		}
	}
}
