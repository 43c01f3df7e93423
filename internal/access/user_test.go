package access_test

import (
	"reflect"
	"testing"

	"waymark/internal/access"
	"waymark/internal/content"
)

func TestResolveFollowsSubgroupsAndSurvivesCycles(t *testing.T) {
	t.Parallel()
	groups := map[int64]access.Group{
		1: {UID: 1, TablesSelect: []string{"pages"}, Mounts: []int64{5}, Subgroups: []int64{2}},
		2: {UID: 2, TablesModify: []string{"tt_content"}, Languages: []int64{1}, Grants: []string{access.GrantApprove}, Mounts: []int64{5, 3}, Subgroups: []int64{1, 9}}, // cycle back to 1, 9 is missing
	}
	a := access.Resolve(access.User{UID: 7, Groups: []int64{1}, Languages: []int64{0}}, groups)
	if want := []int64{1, 2}; !reflect.DeepEqual(a.AllGroups, want) {
		t.Errorf("AllGroups = %v, want %v", a.AllGroups, want)
	}
	if want := []int64{3, 5}; !reflect.DeepEqual(a.EffectiveMounts(), want) {
		t.Errorf("EffectiveMounts = %v, want %v", a.EffectiveMounts(), want)
	}
	if want := []int64{0, 1}; !reflect.DeepEqual(a.EffectiveLanguages(), want) {
		t.Errorf("EffectiveLanguages = %v, want %v (user's and subgroup's)", a.EffectiveLanguages(), want)
	}
	if !a.CanModifyTable("tt_content") || !a.CanReadTable("tt_content") || a.CanModifyTable("pages") {
		t.Error("tables: want tt_content modifiable through the subgroup, pages read-only")
	}
	if !a.HasGrant(access.GrantApprove) || a.HasGrant(access.GrantSkillApprove) {
		t.Errorf("grants = %v, want approve only", a.EffectiveGrants())
	}
	if !a.InGroup(2) || a.InGroup(9) {
		t.Error("InGroup: want 2 (subgroup) and not 9 (missing)")
	}
}

func TestActorNilAndDisabledPassNothing(t *testing.T) {
	t.Parallel()
	everything := map[int64]access.Group{1: {UID: 1, TablesSelect: []string{"pages"}, TablesModify: []string{"pages"}, Grants: []string{access.GrantApprove}}}
	for name, a := range map[string]*access.Actor{
		"nil":            nil,
		"disabled":       access.Resolve(access.User{UID: 1, Disabled: true, Groups: []int64{1}}, everything),
		"disabled admin": access.Resolve(access.User{UID: 1, Disabled: true, Admin: true}, nil),
	} {
		if a.IsAdmin() || a.CanReadTable("pages") || a.CanModifyTable("pages") || a.HasGrant(access.GrantApprove) ||
			a.MayEditField("pages", "title", false) || a.MayEditLanguage(-1) || a.InGroup(1) {
			t.Errorf("%s actor passed a check", name)
		}
		if access.HasPageBit(a, content.Record{Perms: content.Perms{Everybody: 31}}, content.PermShow) {
			t.Errorf("%s actor passed HasPageBit on a page everybody may show", name)
		}
	}
}

func TestHasPageBitOwnerGroupEverybody(t *testing.T) {
	t.Parallel()
	groups := map[int64]access.Group{1: {UID: 1, Subgroups: []int64{2}}, 2: {UID: 2}}
	member := access.Resolve(access.User{UID: 7, Groups: []int64{1}}, groups)
	stranger := access.Resolve(access.User{UID: 8}, nil)
	adminActor := access.Resolve(access.User{UID: 9, Admin: true}, nil)
	page := func(owner, group int64, user, grp, every int) content.Record {
		return content.Record{Table: "pages", Owner: owner, Group: group, Perms: content.Perms{User: user, Group: grp, Everybody: every}}
	}
	tests := []struct {
		name string
		a    *access.Actor
		p    content.Record
		bit  int
		want bool
	}{
		{"owner bits", member, page(7, 0, content.PermShow|content.PermEdit, 0, 0), content.PermEdit, true},
		{"owner bits of another owner", stranger, page(7, 0, 31, 0, 0), content.PermShow, false},
		{"group bits through subgroup", member, page(0, 2, 0, content.PermContent, 0), content.PermContent, true},
		{"group bits of another group", stranger, page(0, 2, 0, 31, 0), content.PermShow, false},
		{"group 0 is no group", member, page(0, 0, 0, 31, 0), content.PermShow, false},
		{"owner 0 is no owner", access.Resolve(access.User{UID: 0}, nil), page(0, 0, 31, 0, 0), content.PermShow, false},
		{"everybody bits", stranger, page(0, 0, 0, 0, content.PermShow), content.PermShow, true},
		{"show is not edit", stranger, page(0, 0, 0, 0, content.PermShow), content.PermEdit, false},
		{"content bit alone", member, page(0, 1, 0, content.PermShow|content.PermEdit, 0), content.PermContent, false},
		{"admin without bits", adminActor, page(0, 0, 0, 0, 0), content.PermContent, true},
	}
	for _, tt := range tests {
		if got := access.HasPageBit(tt.a, tt.p, tt.bit); got != tt.want {
			t.Errorf("%s: HasPageBit(bit %d) = %v, want %v", tt.name, tt.bit, got, tt.want)
		}
	}
}
