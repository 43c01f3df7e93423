package store

import (
	"context"
	"fmt"
)

// LockSettingsTx serialises the writers of the settings tables (users,
// groups, configurations): it moves the settings generation as its first
// write, so on PostgreSQL the transaction holds the generation row's lock
// until it ends and a second writer waits here, then reads (READ COMMITTED)
// what the first committed. Call it before reading what a settings write
// decides on — the next free uid, whether an administrator remains. On
// SQLite writers are serialised by InTx already; the call only moves the
// generation.
func LockSettingsTx(ctx context.Context, tx *Tx) error {
	if _, err := tx.Exec(ctx, "UPDATE access_generation SET gen = gen + 1 WHERE id = 1"); err != nil {
		return fmt.Errorf("lock settings: %w", err)
	}
	return nil
}
