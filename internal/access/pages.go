package access

import (
	"context"

	"waymark/internal/content"
	"waymark/internal/store"
)

// PageTree answers page questions of one actor for many pages with few
// queries: Load reads the pages asked about, their rootlines and the
// default-language page of a translation in batches (one query per level of
// the tree), then MayShow decides in memory. Every page rule of the Checker
// (show, edit, content, mounts) is decided by this one evaluation, so a batch
// (the dashboard, a list of open points, the web UI's page tree) and a single
// check cannot disagree. A PageTree is a read of one moment, for one call;
// it is not safe for concurrent use.
type PageTree struct {
	q      store.Querier
	src    content.Source
	a      *Actor
	mounts map[int64]bool
	pages  map[int64]*content.Record // loaded pages without fields; nil = missing
	show   map[int64]bool            // decided MayShow answers
}

// NewPageTree returns an empty tree for a, reading the pages of src (nil:
// the built-in source) through q. A nil actor (a missing user) may show no
// page.
func NewPageTree(q store.Querier, src content.Source, a *Actor) *PageTree {
	t := &PageTree{q: q, src: content.OrBuiltin(src), a: a, mounts: map[int64]bool{}, pages: map[int64]*content.Record{}, show: map[int64]bool{}}
	if a != nil {
		for _, m := range a.EffectiveMounts() {
			t.mounts[m] = true
		}
	}
	return t
}

// MayShowPages is the batch form of ActorMayShowPage: whether a may show
// each of pages, read at one moment.
func (c *Checker) MayShowPages(ctx context.Context, a *Actor, pages []int64) (map[int64]bool, error) {
	t := NewPageTree(c.db, c.src, a)
	if err := t.Load(ctx, pages); err != nil {
		return nil, err
	}
	out := make(map[int64]bool, len(pages))
	for _, p := range pages {
		out[p] = t.MayShow(p)
	}
	return out, nil
}

// PageEdit says what an actor may change on one page: its page record
// (the pages table, PermEdit) and its content elements (tt_content,
// PermContent) — the page rules of AuthorizeWrite, without the field and
// language checks, which depend on the write.
type PageEdit struct {
	Page    bool // may edit the page record
	Content bool // may edit content elements on the page
}

// Any reports whether the actor may change anything on the page.
func (e PageEdit) Any() bool { return e.Page || e.Content }

// MayEditPages is the batch form of the page rules of AuthorizeWrite: what a
// may edit on each of pages, read at one moment. The dashboard ranks only
// pages an editor can act on with it.
func (c *Checker) MayEditPages(ctx context.Context, a *Actor, pages []int64) (map[int64]PageEdit, error) {
	t := NewPageTree(c.db, c.src, a)
	if err := t.Load(ctx, pages); err != nil {
		return nil, err
	}
	out := make(map[int64]PageEdit, len(pages))
	for _, p := range pages {
		if !a.Active() || p <= 0 {
			out[p] = PageEdit{}
			continue
		}
		out[p] = PageEdit{
			Page:    a.CanModifyTable("pages") && t.pagePerm(p, content.PermEdit),
			Content: a.CanModifyTable("tt_content") && t.pagePerm(p, content.PermContent),
		}
	}
	return out, nil
}

// maxDepth bounds a rootline walk; a deeper tree (or a cycle) fails closed.
const maxDepth = 100

// Load reads the given pages and everything their decision needs; pages
// loaded before are not read again.
func (t *PageTree) Load(ctx context.Context, uids []int64) error {
	want := t.unknown(uids)
	for depth := 0; len(want) > 0 && depth <= maxDepth; depth++ {
		for _, uid := range want {
			t.pages[uid] = nil
		}
		recs, err := t.src.Heads(ctx, t.q, "pages", want)
		if err != nil {
			return err
		}
		var next []int64
		for _, r := range recs {
			p := r
			t.pages[p.UID] = &p
			next = append(next, p.L10nParent)
			if t.rootlines() {
				next = append(next, p.PID)
			}
		}
		want = t.unknown(next)
	}
	return nil
}

// rootlines reports whether a decision can depend on a rootline: not for an
// administrator (who passes), nor for an actor without mounts or a disabled
// one (who fail), so Load reads no rootline for them.
func (t *PageTree) rootlines() bool {
	return t.a.Active() && !t.a.IsAdmin() && len(t.mounts) > 0
}

// unknown returns the distinct positive uids not loaded yet.
func (t *PageTree) unknown(uids []int64) []int64 {
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

// MayShow reports whether the actor may show page uid (loaded before): the
// rule of ActorMayShowPage.
func (t *PageTree) MayShow(uid int64) bool {
	if v, ok := t.show[uid]; ok {
		return v
	}
	v := t.a.Active() && t.pagePerm(uid, content.PermShow)
	t.show[uid] = v
	return v
}

// deciding returns the loaded record whose permissions and rootline decide
// for page uid — the default-language page of a translation, or the dead one
// of the two when either is deleted or a workspace version — or nil when a
// page needed is missing.
func (t *PageTree) deciding(uid int64) *content.Record {
	p := t.pages[uid]
	if p == nil {
		return nil
	}
	if p.Language > 0 && p.L10nParent > 0 {
		parent := t.pages[p.L10nParent]
		if parent == nil {
			return nil
		}
		if !parent.Live() || p.Live() {
			return parent
		}
	}
	return p
}

// pagePerm: page uid (loaded) is live, grants bit to the actor and lies in
// one of the actor's mounts; page 0 and below is for administrators.
func (t *PageTree) pagePerm(uid int64, bit int) bool {
	if uid <= 0 {
		return t.a.IsAdmin()
	}
	p := t.deciding(uid)
	return p != nil && t.recordPerm(p, bit)
}

// recordPerm is pagePerm for the record that decides (see deciding), whose
// rootline is loaded.
func (t *PageTree) recordPerm(p *content.Record, bit int) bool {
	if !p.Live() {
		return false
	}
	if t.a.IsAdmin() {
		return true
	}
	if bit != content.PermShow && p.EditLock {
		return false // a locked page: only administrators change it or what is on it
	}
	if !t.a.Active() || len(t.mounts) == 0 || !HasPageBit(t.a, *p, bit) {
		return false
	}
	return t.inMounts(p)
}

// inMounts walks the loaded rootline up from p: a live page on it is one of
// the actor's mounts. A dead page, a missing one or a cycle ends the walk.
func (t *PageTree) inMounts(p *content.Record) bool {
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
	return false // a cycle in the tree: fail closed
}
