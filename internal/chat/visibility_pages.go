package chat

import (
	"context"
	"fmt"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/store"
)

// pageTree decides "may the reader show this page" for many pages with few
// queries: it loads the pages it is asked about and their rootlines (and the
// default-language page of a translation) in batches, then evaluates the
// rule of access.Checker.ActorMayShowPage in memory. It is a read of one
// moment, for one call.
type pageTree struct {
	q      store.Querier
	a      *access.Actor
	mounts map[int64]bool
	pages  map[int64]*content.Record // loaded pages without fields; nil = missing
	show   map[int64]bool            // decided pages
}

func newPageTree(q store.Querier, a *access.Actor) *pageTree {
	t := &pageTree{q: q, a: a, mounts: map[int64]bool{}, pages: map[int64]*content.Record{}, show: map[int64]bool{}}
	for _, m := range a.EffectiveMounts() {
		t.mounts[m] = true
	}
	return t
}

// maxDepth bounds a rootline walk; a deeper tree (or a cycle) fails closed.
const maxDepth = 100

// load reads the given pages and everything their decision needs.
func (t *pageTree) load(ctx context.Context, uids []int64) error {
	want := t.unknown(uids)
	for depth := 0; len(want) > 0 && depth <= maxDepth; depth++ {
		for _, uid := range want {
			t.pages[uid] = nil
		}
		var next []int64
		err := store.EachIn(want, func(chunk []any, in string) error {
			rows, err := t.q.Query(ctx, `SELECT uid, pid, language, l10n_parent, deleted, workspace, owner_uid, group_uid,
				perms_user, perms_group, perms_everybody FROM records WHERE tbl = 'pages' AND uid IN (`+in+`)`, chunk...)
			if err != nil {
				return fmt.Errorf("read pages: %w", err)
			}
			defer rows.Close()
			for rows.Next() {
				p := &content.Record{Table: "pages"}
				if err := rows.Scan(&p.UID, &p.PID, &p.Language, &p.L10nParent, &p.Deleted, &p.Workspace, &p.Owner,
					&p.Group, &p.Perms.User, &p.Perms.Group, &p.Perms.Everybody); err != nil {
					return fmt.Errorf("read pages: %w", err)
				}
				t.pages[p.UID] = p
				next = append(next, p.PID, p.L10nParent)
			}
			return rows.Err()
		})
		if err != nil {
			return err
		}
		want = t.unknown(next)
	}
	return nil
}

// unknown returns the distinct positive uids not loaded yet.
func (t *pageTree) unknown(uids []int64) []int64 {
	var out []int64
	seen := map[int64]bool{}
	for _, u := range uids {
		if _, ok := t.pages[u]; u > 0 && !ok && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

// mayShow reports whether the reader may show page uid (loaded before).
func (t *pageTree) mayShow(uid int64) bool {
	if v, ok := t.show[uid]; ok {
		return v
	}
	v := t.decide(uid)
	t.show[uid] = v
	return v
}

// decide mirrors access.Checker.ActorMayShowPage: the page that decides (the
// default-language page of a translation) is live, shows to the reader by its
// permission bits and lies in one of the reader's mounts.
func (t *pageTree) decide(uid int64) bool {
	a := t.a
	if !a.Active() {
		return false
	}
	if uid <= 0 {
		return a.IsAdmin()
	}
	p := t.pages[uid]
	if p == nil {
		return false
	}
	if p.Language > 0 && p.L10nParent > 0 {
		parent := t.pages[p.L10nParent]
		if parent == nil || !parent.Live() || !p.Live() {
			return false
		}
		p = parent
	}
	if !p.Live() {
		return false
	}
	if a.IsAdmin() {
		return true
	}
	if len(t.mounts) == 0 || !access.HasPageBit(a, *p, content.PermShow) {
		return false
	}
	for depth := 0; depth < maxDepth; depth++ {
		if !p.Live() {
			return false
		}
		if t.mounts[p.UID] {
			return true
		}
		if p.PID == 0 {
			return false
		}
		if p = t.pages[p.PID]; p == nil {
			return false
		}
	}
	return false
}
