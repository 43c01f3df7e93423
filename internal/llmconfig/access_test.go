package llmconfig

import (
	"context"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Users of the access tests. Group 1 is allowed on configuration 3; group 2
// has group 1 as a subgroup (its members inherit group 1, as in TYPO3);
// group 4 is unrelated.
const (
	userAdmin       = 1
	userMember      = 2
	userSubMember   = 3
	userOutsider    = 4
	userDisabled    = 5
	userService     = 6
	userNoGroups    = 7
	userMissing     = 99
	configInactive  = 8
	configAdminOnly = 9
	configUnknown   = 404
)

func setupAccess(t *testing.T, db *store.DB) bundle {
	t.Helper()
	b, ctx := setup(t, db), context.Background()
	addGroup(t, db, 1, "[]")
	addGroup(t, db, 2, "[1]")
	addGroup(t, db, 4, "[]")
	addUser(t, db, userAdmin, "[]", true, false, false)
	addUser(t, db, userMember, "[1]", false, false, false)
	addUser(t, db, userSubMember, "[2]", false, false, false)
	addUser(t, db, userOutsider, "[4]", false, false, false)
	addUser(t, db, userDisabled, "[1]", false, true, false)
	addUser(t, db, userService, "[1]", false, false, true)
	addUser(t, db, userNoGroups, "[]", false, false, false)
	for _, c := range []Configuration{
		valid(),
		func() Configuration {
			c := valid()
			c.UID, c.Identifier, c.Active = configInactive, "off", false
			return c
		}(),
		func() Configuration {
			c := valid()
			c.UID, c.Identifier, c.AllowedGroups = configAdminOnly, "admins", nil
			return c
		}(),
	} {
		if err := b.store.Put(ctx, c); err != nil {
			t.Fatalf("Put %d: %v", c.UID, err)
		}
	}
	return b
}

func TestActorMayUse(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setupAccess(t, db)
		for _, tc := range []struct {
			name          string
			actor, config int64
			want          bool
		}{
			{"admin", userAdmin, 3, true},
			{"member of allowed group", userMember, 3, true},
			{"member through subgroup", userSubMember, 3, true},
			{"service account in allowed group", userService, 3, true},
			{"member of another group", userOutsider, 3, false},
			{"user without groups", userNoGroups, 3, false},
			{"disabled member", userDisabled, 3, false},
			{"missing user", userMissing, 3, false},
			{"inactive configuration, member", userMember, configInactive, false},
			{"inactive configuration, admin", userAdmin, configInactive, false},
			{"unknown configuration, admin", userAdmin, configUnknown, false},
			{"empty groups, admin", userAdmin, configAdminOnly, true},
			{"empty groups, member", userMember, configAdminOnly, false},
		} {
			got, err := b.store.ActorMayUse(context.Background(), tc.actor, tc.config)
			if err != nil || got != tc.want {
				t.Errorf("%s: ActorMayUse(%d, %d) = %v, %v, want %v", tc.name, tc.actor, tc.config, got, err, tc.want)
			}
		}
	})
}

func TestActorMayUseReadsTheUserAsStoredNow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setupAccess(t, db), context.Background()
		steps := []struct {
			name, change string
			want         bool
		}{
			{"member", "", true},
			{"removed from the group", "UPDATE be_users SET group_uids = '[]' WHERE uid = 2", false},
			{"added back", "UPDATE be_users SET group_uids = '[1]' WHERE uid = 2", true},
			{"moved to a group that includes it", "UPDATE be_users SET group_uids = '[2]' WHERE uid = 2", true},
			{"that group no longer includes it", "UPDATE be_groups SET subgroups = '[]' WHERE uid = 2", false},
			{"made admin", "UPDATE be_users SET admin = TRUE WHERE uid = 2", true},
			{"disabled", "UPDATE be_users SET disabled = TRUE WHERE uid = 2", false},
		}
		for _, s := range steps {
			if s.change != "" {
				exec(t, db, s.change)
			}
			got, err := b.store.ActorMayUse(ctx, userMember, 3)
			if err != nil || got != s.want {
				t.Errorf("after %q: ActorMayUse = %v, %v, want %v", s.name, got, err, s.want)
			}
		}
	})
}

func TestActorMayUseSeesDeactivation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b, ctx := setupAccess(t, db), context.Background()
		if ok, err := b.store.ActorMayUse(ctx, userMember, 3); !ok || err != nil {
			t.Fatalf("ActorMayUse before = %v, %v, want true", ok, err)
		}
		c := valid()
		c.Active = false
		if err := b.store.Put(ctx, c); err != nil {
			t.Fatal(err)
		}
		if ok, err := b.store.ActorMayUse(ctx, userMember, 3); ok || err != nil {
			t.Errorf("ActorMayUse after deactivation = %v, %v, want false", ok, err)
		}
	})
}
