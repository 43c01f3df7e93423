package live_test

import (
	"context"
	"testing"

	"waymark/internal/access"
	"waymark/internal/store/storetest"
	"waymark/internal/typo3"
	"waymark/internal/typo3/live"
	"waymark/internal/typo3/typo3test"
)

// Page rights beside TYPO3 are decided by the one rule above the seam
// (access.Checker's page tree) over TYPO3's pages, users and groups as
// package live reads them: these tests hold that rule to TYPO3's calcPerms
// and isInWebMount on the demo site.

// pageRights is what an actor may do on a page: show it, edit its page
// record (TYPO3's bit 2), edit its content elements (bit 16).
type pageRights struct{ Show, Page, Content bool }

var (
	fullRights = pageRights{true, true, true} // perms 27 and an administrator's
	showOnly   = pageRights{Show: true}
	noRights   = pageRights{}
)

// pageRightsOf returns a function answering a user's rights on a page of
// the TYPO3 database t3 through access.Checker, read afresh at each call.
func pageRightsOf(t *testing.T, t3 typo3test.DB) func(username string, page int64) pageRights {
	t.Helper()
	ctx := context.Background()
	sites := t.TempDir()
	if err := typo3.WriteDemoSites(sites); err != nil {
		t.Fatal(err)
	}
	inst, err := live.New(ctx, t3.DB, t3.Dialect, sites, nil)
	if err != nil {
		t.Fatal(err)
	}
	wdb := storetest.SQLite(t)
	checker := access.NewChecker(wdb, inst, inst)
	return func(username string, page int64) pageRights {
		t.Helper()
		u, err := inst.LoadUserByName(ctx, wdb, username)
		if err != nil {
			t.Fatalf("user %s: %v", username, err)
		}
		a, err := checker.Actor(ctx, u.UID)
		if err != nil {
			t.Fatalf("actor %s: %v", username, err)
		}
		show, err := checker.MayShowPages(ctx, a, []int64{page})
		if err != nil {
			t.Fatalf("MayShowPages(%s, %d) = %v", username, page, err)
		}
		edit, err := checker.MayEditPages(ctx, a, []int64{page})
		if err != nil {
			t.Fatalf("MayEditPages(%s, %d) = %v", username, page, err)
		}
		return pageRights{show[page], edit[page].Page, edit[page].Content}
	}
}

// t3run changes the TYPO3 database as a TYPO3 editor would.
func t3run(t *testing.T, t3 typo3test.DB, query string, args ...any) {
	t.Helper()
	if t3.Dialect == typo3.Postgres {
		query = pgBind(query)
	}
	if _, err := t3.Exec(query, args...); err != nil {
		t.Fatalf("typo3 %s: %v", query, err)
	}
}

func TestTYPO3PageRightsFollowPermsBitsAndMounts(t *testing.T) {
	t.Parallel()
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		rights := pageRightsOf(t, t3)
		for _, c := range []struct {
			user string
			page int64
			want pageRights
		}{
			{"admin", 20, fullRights},
			{"admin", 2, fullRights},
			{"erika", 2, fullRights},  // group Editors owns About: show, edit, new, edit content
			{"erika", 12, fullRights}, // its German translation, in the mount through l10n_parent
			{"erika", 11, fullRights}, // the German home page, a translation at the root level
			{"erika", 3, showOnly},    // Services belongs to Redaktion DE: everybody's show only
			{"erika", 4, showOnly},
			{"erika", 20, noRights}, // the intranet: outside her mount
			{"max", 3, fullRights},
			{"max", 14, fullRights},
			{"max", 2, noRights}, // outside his mount, though everybody may show it
			{"max", 1, noRights},
			{"paula", 2, fullRights},
			{"paula", 21, noRights},
			{"admin", 9, noRights},  // deleted
			{"admin", 99, noRights}, // missing
		} {
			if got := rights(c.user, c.page); got != c.want {
				t.Errorf("rights of %s on page %d = %+v, want %+v", c.user, c.page, got, c.want)
			}
		}
	})
}

// The rootline is read up to the first page that is missing, deleted or not
// live: a page below a deleted page reaches no mount, nor does a page whose
// pids form a cycle (the walk ends), as TYPO3's rootline ends there.
func TestTYPO3PageBelowABrokenOrCyclicRootlineReachesNoMount(t *testing.T) {
	t.Parallel()
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		rights := pageRightsOf(t, t3)
		insert := "INSERT INTO `pages` (`uid`, `pid`, `title`, `perms_everybody`) VALUES (?, ?, ?, 27)"
		t3run(t, t3, insert, 41, 3, "Unter Services")
		t3run(t, t3, insert, 40, 41, "Tiefer")
		if got := rights("max", 40); got != fullRights {
			t.Fatalf("max on 40 below 41 below his mount 3 = %+v, want all", got)
		}
		t3run(t, t3, "UPDATE `pages` SET `deleted` = 1 WHERE `uid` = 41")
		if got := rights("max", 40); got != noRights {
			t.Errorf("max on 40 below the deleted 41 = %+v, want none", got)
		}
		t3run(t, t3, "UPDATE `pages` SET `deleted` = 0, `pid` = 40 WHERE `uid` = 41")
		if got := rights("max", 40); got != noRights {
			t.Errorf("max on 40 in the pid cycle 40→41→40 = %+v, want none", got)
		}
	})
}

// A change of a page's bits, of a group or of a user's mounts in TYPO3
// counts at the next decision: a page's perms_group, a hidden or deleted
// group (it grants nothing), group mounts without the user's option bit 1
// (only her own db_mountpoints count), a mount on a page the user may not
// show (TYPO3 drops it). A hidden page is a frontend flag: the backend
// shows and edits it.
func TestTYPO3PageRightsChangesCountAtTheNextDecision(t *testing.T) {
	t.Parallel()
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		rights := pageRightsOf(t, t3)
		t3run(t, t3, "UPDATE `pages` SET `hidden` = 1 WHERE `uid` IN (1, 2)")
		if got := rights("erika", 2); got != fullRights {
			t.Fatalf("erika on the hidden page 2 under the hidden 1 = %+v, want all", got)
		}
		t3run(t, t3, "UPDATE `pages` SET `perms_group` = 1 WHERE `uid` = 2")
		if got := rights("erika", 2); got != showOnly {
			t.Errorf("erika on 2 after perms_group = 1: %+v, want show only", got)
		}
		t3run(t, t3, "UPDATE `pages` SET `perms_group` = 27 WHERE `uid` = 2")
		for _, change := range []string{"`hidden` = 1", "`deleted` = 1"} {
			t3run(t, t3, "UPDATE `be_groups` SET "+change+" WHERE `uid` = 1")
			if got := rights("erika", 2); got != noRights {
				t.Errorf("erika on 2 with her group's %s = %+v, want none", change, got)
			}
			t3run(t, t3, "UPDATE `be_groups` SET `hidden` = 0, `deleted` = 0 WHERE `uid` = 1")
		}
		if got := rights("erika", 2); got != fullRights {
			t.Fatalf("erika on 2 with her group back = %+v, want all", got)
		}
		t3run(t, t3, "UPDATE `be_users` SET `options` = 2 WHERE `username` = 'erika'")
		if got := rights("erika", 2); got != noRights {
			t.Errorf("erika on 2 without option bit 1 (no group mounts) = %+v, want none", got)
		}
		t3run(t, t3, "UPDATE `be_users` SET `db_mountpoints` = '6' WHERE `username` = 'erika'")
		if got := rights("erika", 6); got != fullRights {
			t.Errorf("erika on 6 in her own mount = %+v, want all", got)
		}
		if got := rights("erika", 2); got != noRights {
			t.Errorf("erika on 2 beside her own mount = %+v, want none", got)
		}
		t3run(t, t3, "UPDATE `be_users` SET `db_mountpoints` = '20,9,99,3' WHERE `username` = 'max'")
		if got := rights("max", 21); got != noRights {
			t.Errorf("max on 21 below his mount 20, which he may not show = %+v, want none", got)
		}
		if got := rights("max", 4); got != fullRights {
			t.Errorf("max on 4 below his mount 3 = %+v, want all", got)
		}
	})
}
