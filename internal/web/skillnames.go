package web

import (
	"context"

	"waymark/internal/process"
)

// skillName is the name of skill uid in the reader's UI language (the
// site's name for it in that language, skill.LocalNames), else name — the
// name the caller read (the version's, or the approval snapshot's).
func (u *UI) skillName(ctx context.Context, me *user, uid int64, name string) string {
	if u.Skills == nil || uid == 0 {
		return name
	}
	n, err := u.Skills.NamesOf(ctx, uid)
	if err != nil {
		return name
	}
	return n.Local.In(me.T.Lang(), name)
}

// localCatalogue names the processes of a catalogue in the reader's UI
// language (skillName), in place, and returns it.
func (u *UI) localCatalogue(ctx context.Context, me *user, list []process.CatalogueEntry) []process.CatalogueEntry {
	for i := range list {
		list[i].Name = u.skillName(ctx, me, list[i].UID, list[i].Name)
	}
	return list
}
