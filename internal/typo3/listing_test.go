package typo3

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

func TestDirectoryListsGroupsAndUsersWithWhetherTheyCanLogIn(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		dir := dirSetup(t, db, d, dirNow)
		ctx := context.Background()
		run(t, db, d, "UPDATE `be_groups` SET `hidden` = 1 WHERE `uid` = 2")
		run(t, db, d, "UPDATE `be_groups` SET `deleted` = 1 WHERE `uid` = 4")
		run(t, db, d, "UPDATE `be_users` SET `endtime` = ? WHERE `username` = 'max'", dirNow.Add(-1).Unix())
		run(t, db, d, "UPDATE `be_users` SET `password` = '$1$GNu9HdMt$RwkPb28pce4nXZfnplVZY/' WHERE `username` = 'paula'")
		groups, err := dir.Groups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var g []string
		for _, x := range groups {
			g = append(g, fmt.Sprintf("%d %s hidden=%v sub=%v", x.UID, x.Title, x.Hidden, x.Subgroups))
		}
		wantRows(t, "groups", g, "1 Editors hidden=false sub=[]", "2 Redaktion DE hidden=true sub=[]", "3 Approvers hidden=false sub=[1]")
		users, err := dir.Users(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var u []string
		for _, x := range users {
			u = append(u, fmt.Sprintf("%s admin=%v active=%v kind=%s login=%v", x.Username, x.Admin, x.Active, x.HashKind, x.CanLogIn()))
		}
		wantRows(t, "users", u,
			"admin admin=true active=true kind=argon2i login=true",
			"erika admin=false active=true kind=argon2i login=true",
			"max admin=false active=false kind=argon2i login=false",
			"paula admin=false active=true kind=salted md5 ($1$ crypt) login=false",
			"importer admin=false active=true kind=empty (no password set) login=false",
		)
	})
}
