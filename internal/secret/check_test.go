package secret

import (
	"context"
	"errors"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// On a database from before the check value, CheckKey tries the key on the
// sealed provider key its caller hands it (secret reads no
// configurations itself): another key's value refuses and stores no check
// value; the right key's value passes and stores one; a failed read is an
// error, not a pass.
func TestCheckKeyOnAnOldDatabaseTriesTheLegacySealedKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		box, other := newBox(t, 1), newBox(t, 2)
		sealedBy := func(b *Box) func(context.Context) (string, bool, error) {
			v, err := b.Seal("sk-provider")
			if err != nil {
				t.Fatal(err)
			}
			return func(context.Context) (string, bool, error) { return v, true, nil }
		}
		checks := func() int {
			var n int
			if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM secret_key_check").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if err := CheckKey(ctx, db, box, "test", sealedBy(other)); !errors.Is(err, ErrWrongKey) {
			t.Fatalf("CheckKey with another key's provider key = %v, want ErrWrongKey", err)
		}
		boom := errors.New("read failed")
		if err := CheckKey(ctx, db, box, "test", func(context.Context) (string, bool, error) { return "", false, boom }); !errors.Is(err, boom) {
			t.Fatalf("CheckKey with a failed legacy read = %v, want that error", err)
		}
		if n := checks(); n != 0 {
			t.Fatalf("refused checks stored %d check values", n)
		}
		if err := CheckKey(ctx, db, box, "test", sealedBy(box)); err != nil {
			t.Fatalf("CheckKey with the key's own provider key = %v", err)
		}
		if n := checks(); n != 1 {
			t.Fatalf("%d check values after the pass, want 1", n)
		}
		if err := CheckKey(ctx, db, other, "test", func(context.Context) (string, bool, error) { return "", false, nil }); !errors.Is(err, ErrWrongKey) {
			t.Fatalf("another key after the check value = %v, want ErrWrongKey", err)
		}
	})
}
