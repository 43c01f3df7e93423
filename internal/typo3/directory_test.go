package typo3

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// dirSetup is a demo database of dialect d with a Directory over it whose
// clock reads now.
func dirSetup(t *testing.T, db *sql.DB, d Dialect, now time.Time) *Directory {
	t.Helper()
	demoDB(t, db, d)
	dir, err := NewDirectory(db, d, &DirectoryConfig{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

var dirNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func run(t *testing.T, db *sql.DB, d Dialect, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(d.rebind(q), args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func mustUser(t *testing.T, dir *Directory, name string) *User {
	t.Helper()
	u, err := dir.User(context.Background(), name)
	if err != nil {
		t.Fatalf("User(%s) = %v", name, err)
	}
	return u
}

// rights is what a test compares of a user.
type rights struct {
	Admin                              bool
	Groups, AllowedLanguages, Mounts   []int64
	TablesSelect, TablesModify, Fields []string
}

func rightsOf(u *User) rights {
	return rights{u.Admin, u.Groups, u.AllowedLanguages, u.Mounts, u.TablesSelect, u.TablesModify, u.NonExcludeFields}
}

func TestDirectoryResolvesTheDemoUsersRights(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		tt := []string{"pages", "tt_content"}
		for _, c := range []struct {
			name string
			want rights
		}{
			{"admin", rights{Admin: true}},
			{"erika", rights{Groups: []int64{1}, AllowedLanguages: []int64{0, 1}, Mounts: []int64{1}, TablesSelect: tt, TablesModify: tt,
				Fields: []string{"pages:description", "pages:seo_title", "pages:keywords"}}},
			{"max", rights{Groups: []int64{2}, AllowedLanguages: []int64{1}, Mounts: []int64{3}, TablesSelect: tt, TablesModify: tt,
				Fields: []string{"pages:description", "pages:seo_title"}}},
			// Approvers has Editors as subgroup: its rights and mounts come along.
			{"paula", rights{Groups: []int64{1, 3}, AllowedLanguages: []int64{0, 1}, Mounts: []int64{1}, TablesSelect: tt, TablesModify: tt,
				Fields: []string{"pages:description", "pages:seo_title", "pages:keywords"}}},
		} {
			u := mustUser(t, dir, c.name)
			if got := rightsOf(u); !reflect.DeepEqual(got, c.want) {
				t.Errorf("rights of %s =\n%+v\nwant\n%+v", c.name, got, c.want)
			}
		}
		erika := mustUser(t, dir, "erika")
		if erika.Lang != "de" || erika.UID != 2 || erika.RealName != "Erika" {
			t.Errorf("erika = uid %d, lang %q, name %q", erika.UID, erika.Lang, erika.RealName)
		}
	})
}

// A rights change in TYPO3 counts at the next read, not after a sync.
func TestDirectoryReadsRightsChangesLive(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		if u := mustUser(t, dir, "erika"); !u.CanModifyTable("tt_content") {
			t.Fatalf("erika before: modify %v", u.TablesModify)
		}
		run(t, db, d, "UPDATE `be_groups` SET `tables_modify` = 'pages' WHERE `uid` = 1")
		if u := mustUser(t, dir, "erika"); u.CanModifyTable("tt_content") || !u.CanModifyTable("pages") || !u.CanSelectTable("tt_content") {
			t.Errorf("after tables_modify = pages: modify %v, select %v", u.TablesModify, u.TablesSelect)
		}
	})
}

func TestDirectoryHiddenOrDeletedGroupGrantsNothing(t *testing.T) {
	t.Parallel()
	for _, change := range []string{"`hidden` = 1", "`deleted` = 1"} {
		eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
			dir := dirSetup(t, db, d, dirNow)
			run(t, db, d, "UPDATE `be_groups` SET "+change+" WHERE `uid` = 1")
			erika := mustUser(t, dir, "erika")
			if got := rightsOf(erika); !reflect.DeepEqual(got, rights{}) {
				t.Errorf("%s: rights of erika = %+v, want none", change, got)
			}
			// paula keeps Approvers, which alone selects but modifies nothing.
			paula := rightsOf(mustUser(t, dir, "paula"))
			want := rights{Groups: []int64{3}, TablesSelect: []string{"pages", "tt_content"}}
			if !reflect.DeepEqual(paula, want) {
				t.Errorf("%s of her subgroup: rights of paula = %+v, want %+v", change, paula, want)
			}
		})
	}
}

func TestDirectorySubgroupCycleEndsAndCountsEachGroupOnce(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		run(t, db, d, "UPDATE `be_groups` SET `subgroup` = '3,1' WHERE `uid` = 1")
		run(t, db, d, "UPDATE `be_groups` SET `subgroup` = '1,4' WHERE `uid` = 3")
		got := mustUser(t, dir, "erika").Groups
		if want := []int64{4, 3, 1}; !reflect.DeepEqual(got, want) {
			t.Errorf("groups of erika with the cycle 1→3→1 = %v, want %v", got, want)
		}
	})
}

func TestDirectoryMountsFromGroupsOnlyWithOptionBit1(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		run(t, db, d, "UPDATE `be_users` SET `options` = 2 WHERE `username` = 'erika'")
		erika := mustUser(t, dir, "erika")
		if len(erika.Mounts) != 0 {
			t.Errorf("mounts of erika without option bit 1 = %v, want none", erika.Mounts)
		}
		// Her own mount counts without the bit.
		run(t, db, d, "UPDATE `be_users` SET `db_mountpoints` = '6' WHERE `username` = 'erika'")
		erika = mustUser(t, dir, "erika")
		if !reflect.DeepEqual(erika.Mounts, []int64{6}) {
			t.Errorf("mounts of erika with db_mountpoints 6 = %v", erika.Mounts)
		}
	})
}

// TYPO3 keeps only mounts the user may show; a mount on a page nobody but
// its owner and group may see is dropped, as are deleted and missing pages.
func TestDirectoryDropsMountsTheUserMayNotShow(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		run(t, db, d, "UPDATE `be_users` SET `db_mountpoints` = '20,9,99,3' WHERE `username` = 'max'")
		max := mustUser(t, dir, "max")
		if !reflect.DeepEqual(max.Mounts, []int64{3}) {
			t.Errorf("mounts of max with 20 (not shown), 9 (deleted), 99 (missing), 3 = %v, want [3]", max.Mounts)
		}
	})
}

func TestDirectoryRefusesInactiveUsers(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		ctx := context.Background()
		past, future := dirNow.Add(-time.Hour).Unix(), dirNow.Add(time.Hour).Unix()
		run(t, db, d, "UPDATE `be_users` SET `disable` = 1 WHERE `username` = 'erika'")
		run(t, db, d, "UPDATE `be_users` SET `starttime` = ? WHERE `username` = 'max'", future)
		run(t, db, d, "UPDATE `be_users` SET `endtime` = ? WHERE `username` = 'paula'", past)
		run(t, db, d, "UPDATE `be_users` SET `deleted` = 1 WHERE `username` = 'importer'")
		for _, c := range []struct {
			name   string
			reason InactiveReason
		}{{"erika", Disabled}, {"max", NotYetActive}, {"paula", Expired}} {
			_, err := dir.User(ctx, c.name)
			var ie *InactiveError
			if !errors.As(err, &ie) || ie.Reason != c.reason {
				t.Errorf("User(%s) = %v, want InactiveError %q", c.name, err, c.reason)
			}
			if want := fmt.Sprintf("backend user %q is %s", c.name, c.reason); err != nil && err.Error() != want {
				t.Errorf("User(%s) error %q, want %q", c.name, err, want)
			}
		}
		for _, name := range []string{"importer", "nobody"} {
			if _, err := dir.User(ctx, name); !errors.Is(err, ErrUnknownUser) {
				t.Errorf("User(%s) = %v, want ErrUnknownUser", name, err)
			}
		}
		// The end time is exclusive and 0 means none; a start time now is active.
		run(t, db, d, "UPDATE `be_users` SET `endtime` = ?, `starttime` = ? WHERE `username` = 'paula'", future, dirNow.Unix())
		if _, err := dir.User(ctx, "paula"); err != nil {
			t.Errorf("User(paula) inside start and end time = %v", err)
		}
	})
}

func TestDirectoryLoginChecksTheTYPO3Password(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		ctx := context.Background()
		u, err := dir.Login(ctx, "erika", "erika-demo-pass")
		if err != nil || u.Username != "erika" {
			t.Fatalf("Login(erika, right) = %v, %v", u, err)
		}
		if _, err := dir.Login(ctx, "erika", "max-demo-pass"); !errors.Is(err, ErrWrongPassword) {
			t.Errorf("Login(erika, wrong) = %v, want ErrWrongPassword", err)
		}
		if _, err := dir.Login(ctx, "importer", ""); !errors.Is(err, ErrWrongPassword) {
			t.Errorf("Login(importer without password) = %v, want ErrWrongPassword", err)
		}
		// Unknown and disabled accounts answer like a wrong password: a login
		// never tells whether an account exists.
		if _, err := dir.Login(ctx, "nobody", "x"); !errors.Is(err, ErrWrongPassword) {
			t.Errorf("Login(nobody) = %v, want ErrWrongPassword", err)
		}
		run(t, db, d, "UPDATE `be_users` SET `disable` = 1 WHERE `username` = 'admin'")
		if _, err := dir.Login(ctx, "admin", "admin-demo-pass"); !errors.Is(err, ErrWrongPassword) {
			t.Errorf("Login(disabled admin, right password) = %v, want ErrWrongPassword", err)
		}
		// A bcrypt hash as TYPO3 writes it (PHP, cost 10, over TYPO3's pre-hash).
		run(t, db, d, "UPDATE `be_users` SET `password` = ? WHERE `username` = 'max'", "$2y$10$DcdSQ25NwE4gWsZFjEOFB.M6KrovWkQg9LI0shTo5FfmFCbE3LhzK")
		if _, err := dir.Login(ctx, "max", "admin-demo-pass"); err != nil {
			t.Errorf("Login(max with a TYPO3 bcrypt hash) = %v", err)
		}
		run(t, db, d, "UPDATE `be_users` SET `password` = ? WHERE `username` = 'paula'", "$P$C6RmB5q1GJ3mGhNDbnCgXBpgFZ4XxD/")
		_, err = dir.Login(ctx, "paula", "paula-demo-pass")
		if !errors.Is(err, ErrUnsupportedHash) || err.Error() != `backend user "paula": unsupported password hash: phpass ($P$)` {
			t.Errorf("Login(paula with a phpass hash) = %v", err)
		}
	})
}

func TestNewDirectoryRefusesBadArguments(t *testing.T) {
	t.Parallel()
	if _, err := NewDirectory(nil, MariaDB, nil); err == nil {
		t.Error("NewDirectory(nil db) succeeded")
	}
	if _, err := NewDirectory(&sql.DB{}, "oracle", nil); err == nil || err.Error() != `typo3 directory: unknown dialect "oracle"` {
		t.Errorf("NewDirectory(oracle) = %v", err)
	}
}
