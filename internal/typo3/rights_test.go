package typo3

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// TYPO3's fetchGroupData starts the language list from be_users.allowed_languages
// and adds the groups': a user's own limit counts, and her own entries widen
// what her groups allow.
func TestTheUsersOwnAllowedLanguagesCountBesideTheGroups(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		// max's group allows language 1; her own list adds 2.
		run(t, db, d, "UPDATE `be_users` SET `allowed_languages` = '2' WHERE `username` = 'max'")
		if got := mustUser(t, dir, "max").AllowedLanguages; !reflect.DeepEqual(got, []int64{2, 1}) {
			t.Errorf("max's languages = %v, want [2 1]", got)
		}
		// A user whose groups set no limit is limited by her own list.
		run(t, db, d, "UPDATE `be_groups` SET `allowed_languages` = '' WHERE `uid` = 1")
		run(t, db, d, "UPDATE `be_users` SET `allowed_languages` = '0' WHERE `username` = 'erika'")
		erika := mustUser(t, dir, "erika")
		if !erika.LanguageAllowed(0) || erika.LanguageAllowed(1) {
			t.Errorf("erika with her own list 0: language 0 %v, 1 %v; want true, false (languages %v)",
				erika.LanguageAllowed(0), erika.LanguageAllowed(1), erika.AllowedLanguages)
		}
	})
}

// tt_content.CType has TCA authMode explicitAllow: the groups'
// explicit_allowdeny (subgroups included, hidden groups not) decide which
// types of content element a user may change, as checkAuthMode.
func TestTheGroupsExplicitAllowDecidesWhichContentTypesAUserMayChange(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		// The demo gives the editing groups the types the demo uses.
		for _, name := range []string{"erika", "max", "paula"} {
			u := mustUser(t, dir, name)
			if !u.CheckAuthMode("tt_content", "CType", "text") || !u.CheckAuthMode("tt_content", "CType", "image") {
				t.Errorf("%s: text and image not allowed (explicit_allowdeny %v)", name, u.ExplicitAllow)
			}
		}
		run(t, db, d, "UPDATE `be_groups` SET `explicit_allowdeny` = 'tt_content:CType:text' WHERE `uid` = 1")
		erika := mustUser(t, dir, "erika")
		for _, c := range []struct {
			value string
			want  bool
		}{
			{"text", true}, {"image", false}, {"", true}, {"--div--", true}, {"text,image", false}, {"a:b", false},
		} {
			if got := erika.CheckAuthMode("tt_content", "CType", c.value); got != c.want {
				t.Errorf("CheckAuthMode(CType %q) = %v, want %v", c.value, got, c.want)
			}
		}
		// An empty list allows no type; an entry of TYPO3 before 12 with a
		// fourth part, not migrated, matches nothing in 13.4.
		run(t, db, d, "UPDATE `be_groups` SET `explicit_allowdeny` = '' WHERE `uid` = 1")
		if mustUser(t, dir, "erika").CheckAuthMode("tt_content", "CType", "text") {
			t.Error("an empty explicit_allowdeny allows text")
		}
		run(t, db, d, "UPDATE `be_groups` SET `explicit_allowdeny` = 'tt_content:CType:text:ALLOW' WHERE `uid` = 1")
		if mustUser(t, dir, "erika").CheckAuthMode("tt_content", "CType", "text") {
			t.Error("tt_content:CType:text:ALLOW allows text; TYPO3 13.4 matches three parts only")
		}
		// Through a subgroup; not through a hidden group.
		run(t, db, d, "UPDATE `be_groups` SET `explicit_allowdeny` = 'tt_content:CType:image' WHERE `uid` = 2")
		run(t, db, d, "UPDATE `be_groups` SET `subgroup` = '2' WHERE `uid` = 1")
		if !mustUser(t, dir, "erika").CheckAuthMode("tt_content", "CType", "image") {
			t.Error("image allowed by a subgroup is refused")
		}
		run(t, db, d, "UPDATE `be_groups` SET `hidden` = 1 WHERE `uid` = 2")
		if mustUser(t, dir, "erika").CheckAuthMode("tt_content", "CType", "image") {
			t.Error("image allowed by a hidden subgroup is allowed")
		}
		if !mustUser(t, dir, "admin").CheckAuthMode("tt_content", "CType", "anything") {
			t.Error("an administrator is refused a type")
		}
	})
}

const activeTOTP = `{"totp":{"secret":"KRUGS4ZANFZSAYJAONSWG4TFOQ","active":true,"attempts":0},"recovery-codes":{"active":true,"codes":["x"]}}`

// A user with an active second factor in TYPO3 cannot log in with her
// password: Waymark cannot ask for the second factor. She is told so only
// with the right password; a wrong one is answered as for anyone.
func TestLoginRefusesAUserWithASecondFactor(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		ctx := context.Background()
		run(t, db, d, "UPDATE `be_users` SET `mfa` = ? WHERE `username` = 'erika'", []byte(activeTOTP))
		if _, err := dir.Login(ctx, "erika", "erika-demo-pass"); !errors.Is(err, ErrMFARequired) {
			t.Errorf("Login(erika, right password) with TOTP = %v, want ErrMFARequired", err)
		}
		if _, err := dir.Login(ctx, "erika", "wrong"); !errors.Is(err, ErrWrongPassword) {
			t.Errorf("Login(erika, wrong password) with TOTP = %v, want ErrWrongPassword", err)
		}
		// Inactive providers, recovery codes alone and a TOTP without a
		// secret are no second factor, as TYPO3's providers decide.
		for _, mfa := range []string{
			`{"totp":{"secret":"KRUGS4ZANFZSAYJAONSWG4TFOQ","active":false}}`,
			`{"recovery-codes":{"active":true,"codes":["x"]}}`,
			`{"totp":{"secret":"","active":true}}`,
			``,
		} {
			run(t, db, d, "UPDATE `be_users` SET `mfa` = ? WHERE `username` = 'erika'", []byte(mfa))
			if _, err := dir.Login(ctx, "erika", "erika-demo-pass"); err != nil {
				t.Errorf("Login(erika) with mfa %s = %v, want a login", mfa, err)
			}
		}
		run(t, db, d, "UPDATE `be_users` SET `mfa` = ? WHERE `username` = 'erika'", []byte(`{"webauthn":{"active":1}}`))
		if u, err := dir.User(ctx, "erika"); err != nil || !u.MFA {
			t.Errorf("User(erika) with an extension's active provider: MFA %v, %v; want true", u != nil && u.MFA, err)
		}
	})
}

// `waymark typo3 check` names the users with a second factor and does not
// count them, nor TYPO3's command-line user _cli_, as password logins.
func TestCheckNamesUsersWithASecondFactorAndNoPasswordLoginForThem(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		ctx := context.Background()
		run(t, db, d, "UPDATE `be_users` SET `mfa` = ? WHERE `username` = 'erika'", []byte(activeTOTP))
		hash, err := HashArgon2iPassword("random-cli-pass", cheapArgon2)
		if err != nil {
			t.Fatal(err)
		}
		run(t, db, d, "INSERT INTO `be_users` (`uid`, `pid`, `username`, `password`, `admin`) VALUES (50, 0, '_cli_', ?, 1)", hash)
		r, err := Check(ctx, db, d, t.TempDir(), dirNow.Unix())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.MFA, []string{"erika"}) || slices.Contains(r.LogInAs, "erika") || slices.Contains(r.LogInAs, "_cli_") || !r.CLI {
			t.Errorf("check: MFA %v, can log in %v, cli %v; want erika with MFA, neither erika nor _cli_ logging in", r.MFA, r.LogInAs, r.CLI)
		}
		lines := strings.Join(r.Lines(), "\n")
		if !strings.Contains(lines, "second factor (MFA) active, no password login — they open Waymark from the TYPO3 backend: erika") {
			t.Errorf("check lines do not name erika's second factor:\n%s", lines)
		}
		users, err := dir.Users(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range users {
			if (u.Username == "erika" || u.Username == "_cli_") && u.CanLogIn() {
				t.Errorf("Users: %s CanLogIn", u.Username)
			}
		}
		if _, err := dir.Login(ctx, "_cli_", "random-cli-pass"); !errors.Is(err, ErrWrongPassword) {
			t.Errorf("Login(_cli_) = %v, want ErrWrongPassword", err)
		}
	})
}

// Every refused password login costs about the same: an unknown, a
// disabled, an expired user, one without a password, one with a second
// factor and a wrong password of an active user are each answered after one
// password verification of the installation's kind and cost. Without the
// dummy verification the unknown user was answered in milliseconds and the
// wrong password after a whole Argon2 computation.
func TestEveryRefusedLoginTakesAsLongAsAWrongPassword(t *testing.T) {
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		ctx := context.Background()
		// A cost that dwarfs the queries (about 30-100 ms a verification).
		if err := CreateDemo(ctx, db, d, DemoConfig{Argon2: Argon2Params{Memory: 16 * 1024, Time: 3, Threads: 1}}); err != nil {
			t.Fatal(err)
		}
		dir, err := NewDirectory(db, d, &DirectoryConfig{Now: func() time.Time { return dirNow }})
		if err != nil {
			t.Fatal(err)
		}
		run(t, db, d, "UPDATE `be_users` SET `disable` = 1 WHERE `username` = 'max'")
		run(t, db, d, "UPDATE `be_users` SET `endtime` = ? WHERE `username` = 'paula'", dirNow.Add(-time.Hour).Unix())
		run(t, db, d, "UPDATE `be_users` SET `mfa` = ? WHERE `username` = 'admin'", []byte(activeTOTP))
		once := func(user, password string) time.Duration {
			start := time.Now()
			if _, err := dir.Login(ctx, user, password); err == nil {
				t.Fatalf("Login(%s) succeeded", user)
			}
			return time.Since(start)
		}
		median := func(ds []time.Duration) time.Duration {
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			return ds[len(ds)/2]
		}
		for _, c := range []struct{ name, user, password string }{
			{"unknown user", "nobody", "some-password"},
			{"disabled user", "max", "max-demo-pass"},
			{"expired user", "paula", "paula-demo-pass"},
			{"user without a password", "importer", "x"},
			{"user with a second factor, wrong password", "admin", "wrong"},
		} {
			// Taken in turns with a wrong password of an active user, so a
			// machine busy with other tests slows both alike.
			var got, wrong []time.Duration
			for range 7 {
				wrong = append(wrong, once("erika", "wrong-password"))
				got = append(got, once(c.user, c.password))
			}
			if g, w := median(got), median(wrong); g*3 < w || g > w*3 {
				t.Errorf("%s: median %v, wrong password of an active user %v; want within 3x", c.name, g, w)
			}
		}
	})
}

// sysWorkspace creates EXT:workspaces' table with the columns Waymark reads.
func sysWorkspace(t *testing.T, db *sql.DB, d Dialect) {
	t.Helper()
	uid := "`uid` INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY"
	if d == Postgres {
		uid = "`uid` SERIAL PRIMARY KEY"
	}
	run(t, db, d, "CREATE TABLE `sys_workspace` ("+uid+", `pid` INT NOT NULL DEFAULT 0, `deleted` SMALLINT NOT NULL DEFAULT 0, "+
		"`title` VARCHAR(30) NOT NULL DEFAULT '', `adminusers` TEXT, `members` TEXT)")
}

// With EXT:workspaces installed a user needs bit 1 of workspace_perms (her
// own, default 1, or a group's) for the live workspace; Workspace tells
// where TYPO3 puts her changes, as setWorkspace decides it.
func TestWorkspaceIsWhereTYPO3PutsTheUsersChanges(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		ctx := context.Background()
		check := func(name string, wantLive bool, want Workspace) {
			t.Helper()
			u := mustUser(t, dir, name)
			live, err := dir.LiveAccess(ctx, u)
			if err != nil || live != wantLive {
				t.Errorf("LiveAccess(%s) = %v, %v; want %v", name, live, err, wantLive)
			}
			w, err := dir.Workspace(ctx, u)
			if err != nil || w != want {
				t.Errorf("Workspace(%s) = %+v, %v; want %+v", name, w, err, want)
			}
		}
		// Without EXT:workspaces everyone works live, whatever the bits say.
		run(t, db, d, "UPDATE `be_users` SET `workspace_perms` = 0 WHERE `username` = 'erika'")
		check("erika", true, Workspace{})

		sysWorkspace(t, db, d)
		check("erika", false, Workspace{ID: NoWorkspace})
		check("max", true, Workspace{}) // be_users.workspace_perms defaults to 1
		check("admin", true, Workspace{})
		run(t, db, d, "INSERT INTO `sys_workspace` (`uid`, `pid`, `title`, `adminusers`, `members`) VALUES "+
			"(1, 0, 'Review', '', 'be_groups_1'), (2, 0, 'Autumn campaign', 'be_users_2', ''), (3, 0, 'Deleted', '', 'be_users_2')")
		run(t, db, d, "UPDATE `sys_workspace` SET `deleted` = 1 WHERE `uid` = 3")
		// The first by title she may use: an owner of "Autumn campaign".
		check("erika", false, Workspace{ID: 2, Title: "Autumn campaign"})
		// The one she chose last, when she may use it.
		run(t, db, d, "UPDATE `be_users` SET `workspace_id` = 1 WHERE `username` = 'erika'")
		check("erika", false, Workspace{ID: 1, Title: "Review"})
		run(t, db, d, "UPDATE `be_users` SET `workspace_id` = 3 WHERE `username` = 'erika'")
		check("erika", false, Workspace{ID: 2, Title: "Autumn campaign"})
		// A group's bit 1 gives live access back.
		run(t, db, d, "UPDATE `be_groups` SET `workspace_perms` = 1 WHERE `uid` = 1")
		run(t, db, d, "UPDATE `be_users` SET `workspace_id` = 0 WHERE `username` = 'erika'")
		check("erika", true, Workspace{})
	})
}
