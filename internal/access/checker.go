package access

import (
	"context"
	"errors"
	"fmt"

	"waymark/internal/content"
	"waymark/internal/fault"
	"waymark/internal/store"
)

// ErrDenied is the sentinel every refusal of a permission check wraps.
var ErrDenied = fault.New(fault.Forbidden, "forbidden", "permission denied")

// DeniedError says which check refused.
type DeniedError struct{ Reason string }

func (e *DeniedError) Error() string { return "permission denied: " + e.Reason }

// Is makes errors.Is(err, ErrDenied) true.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// Fault is ErrDenied: the client never sees the reason.
func (e *DeniedError) Fault() *fault.Error { return ErrDenied }

func deny(format string, args ...any) error {
	return &DeniedError{Reason: fmt.Sprintf(format, args...)}
}

// Checker answers permission questions about a user by uid, reading the user,
// its groups and the pages involved from the store at every call.
type Checker struct {
	db  store.Querier
	src content.Source
	dir Directory
}

// NewChecker returns a checker reading from db the users of dir and the
// pages of src (nil: the built-in directory and source).
func NewChecker(db store.Querier, src content.Source, dir Directory) *Checker {
	return &Checker{db: db, src: content.OrBuiltin(src), dir: OrBuiltin(dir)}
}

var _ content.Authorizer = (*Checker)(nil)

// Actor loads the user as stored now. A missing user yields a nil actor and no
// error: a nil actor passes no check.
func (c *Checker) Actor(ctx context.Context, uid int64) (*Actor, error) {
	a, err := LoadActor(ctx, c.dir, c.db, uid)
	if errors.Is(err, ErrNoUser) {
		return nil, nil
	}
	return a, err
}

func (c *Checker) with(ctx context.Context, uid int64, f func(*Actor) (bool, error)) (bool, error) {
	a, err := c.Actor(ctx, uid)
	if err != nil || !a.Active() {
		return false, err
	}
	return f(a)
}

// CanReadTable reports whether user uid may read table.
func (c *Checker) CanReadTable(ctx context.Context, uid int64, table string) (bool, error) {
	return c.with(ctx, uid, func(a *Actor) (bool, error) { return a.CanReadTable(table), nil })
}

// CanModifyTable reports whether user uid may modify table.
func (c *Checker) CanModifyTable(ctx context.Context, uid int64, table string) (bool, error) {
	return c.with(ctx, uid, func(a *Actor) (bool, error) { return a.CanModifyTable(table), nil })
}

// MayEditField reports whether user uid may edit table.field (exclude flag from the schema).
func (c *Checker) MayEditField(ctx context.Context, uid int64, table, field string) (bool, error) {
	return c.with(ctx, uid, func(a *Actor) (bool, error) {
		schemas, err := content.LoadSchemas(ctx, c.db)
		if err != nil {
			return false, err
		}
		t, ok := schemas.Table(table)
		if !ok {
			return false, nil
		}
		f, ok := t.Field(field)
		if !ok {
			return false, nil
		}
		return a.MayEditField(table, field, f.Exclude), nil
	})
}

// MayEditLanguage reports whether user uid may edit records in language lang.
func (c *Checker) MayEditLanguage(ctx context.Context, uid int64, lang int64) (bool, error) {
	return c.with(ctx, uid, func(a *Actor) (bool, error) { return a.MayEditLanguage(lang), nil })
}

// IsInWebMount reports whether page pageUID lies in one of the user's DB mounts.
func (c *Checker) IsInWebMount(ctx context.Context, uid int64, pageUID int64) (bool, error) {
	return c.with(ctx, uid, func(a *Actor) (bool, error) { return c.inMount(ctx, c.db, a, pageUID) })
}

// MayShowPage reports whether user uid may see page pageUID.
func (c *Checker) MayShowPage(ctx context.Context, uid int64, pageUID int64) (bool, error) {
	return c.with(ctx, uid, func(a *Actor) (bool, error) { return c.pagePerm(ctx, c.db, a, pageUID, content.PermShow) })
}

// MayEditContentOnPage reports whether user uid may edit content elements on page pageUID.
func (c *Checker) MayEditContentOnPage(ctx context.Context, uid int64, pageUID int64) (bool, error) {
	return c.with(ctx, uid, func(a *Actor) (bool, error) {
		if !a.CanModifyTable("tt_content") {
			return false, nil
		}
		return c.pagePerm(ctx, c.db, a, pageUID, content.PermContent)
	})
}

// MayReadRecord reports whether user uid may read rec: its table, the
// root-level rule, and the page it is (or lies on) being showable.
func (c *Checker) MayReadRecord(ctx context.Context, uid int64, rec content.Record) (bool, error) {
	return c.with(ctx, uid, func(a *Actor) (bool, error) { return c.ActorMayReadRecord(ctx, a, rec) })
}

// ActorMayReadRecord is MayReadRecord for an actor loaded in the same request.
func (c *Checker) ActorMayReadRecord(ctx context.Context, a *Actor, rec content.Record) (bool, error) {
	if !a.Active() || !rec.Live() {
		return false, nil
	}
	if a.IsAdmin() {
		return true, nil
	}
	if !a.CanReadTable(rec.Table) {
		return false, nil
	}
	page := rec.PID
	if rec.Table == "pages" {
		page = rec.UID
		if rec.Language <= 0 || rec.L10nParent == 0 {
			return c.pagePermOf(ctx, c.db, a, rec, content.PermShow) // the page decides for itself
		}
	}
	if page == 0 {
		return false, nil // root level: administrators only
	}
	return c.pagePerm(ctx, c.db, a, page, content.PermShow)
}

// inMount reports whether page pageUID (the default-language page of a
// translation) lies in one of the actor's mounts. Page uid 0 and deleted or
// non-live pages are never in a mount for editors.
func (c *Checker) inMount(ctx context.Context, q store.Querier, a *Actor, pageUID int64) (bool, error) {
	if a.IsAdmin() {
		return true, nil
	}
	if pageUID <= 0 || len(a.mounts) == 0 {
		return false, nil
	}
	t := NewPageTree(q, c.src, a)
	if err := t.Load(ctx, []int64{pageUID}); err != nil {
		return false, err
	}
	p := t.deciding(pageUID)
	return p != nil && t.inMounts(p), nil
}

// pagePerm checks that the page is live, in a mount and grants bit to the
// actor: the rule of PageTree, for one page.
func (c *Checker) pagePerm(ctx context.Context, q store.Querier, a *Actor, pageUID int64, bit int) (bool, error) {
	if pageUID <= 0 {
		return a.IsAdmin(), nil
	}
	t := NewPageTree(q, c.src, a)
	if err := t.Load(ctx, []int64{pageUID}); err != nil {
		return false, err
	}
	return t.pagePerm(pageUID, bit), nil
}

// pagePermOf is pagePerm for the page record that decides (a default-language
// page), read by the caller already.
func (c *Checker) pagePermOf(ctx context.Context, q store.Querier, a *Actor, p content.Record, bit int) (bool, error) {
	t := NewPageTree(q, c.src, a)
	if t.rootlines() && p.PID > 0 {
		t.pages[p.UID] = &p
		if err := t.Load(ctx, []int64{p.PID}); err != nil {
			return false, err
		}
	}
	return t.recordPerm(&p, bit), nil
}

// ActorMayShowPage is MayShowPage for an actor loaded in the same request.
func (c *Checker) ActorMayShowPage(ctx context.Context, a *Actor, pageUID int64) (bool, error) {
	if !a.Active() {
		return false, nil
	}
	return c.pagePerm(ctx, c.db, a, pageUID, content.PermShow)
}

// ActorMayShowPageRecord is ActorMayShowPage for a default-language page
// record the caller read already (a translation decides through its
// default-language page: use ActorMayShowPage for one).
func (c *Checker) ActorMayShowPageRecord(ctx context.Context, a *Actor, page content.Record) (bool, error) {
	if !a.Active() {
		return false, nil
	}
	if page.Language > 0 && page.L10nParent > 0 {
		return c.pagePerm(ctx, c.db, a, page.UID, content.PermShow)
	}
	return c.pagePermOf(ctx, c.db, a, page, content.PermShow)
}

// HasPageBit evaluates a page's owner/group/everybody bits for the actor.
func HasPageBit(a *Actor, p content.Record, bit int) bool {
	if a.IsAdmin() {
		return true
	}
	if !a.Active() {
		return false
	}
	perms := p.Perms.Everybody
	if p.Owner != 0 && p.Owner == a.UID {
		perms |= p.Perms.User
	}
	if p.Group != 0 && a.InGroup(p.Group) {
		perms |= p.Perms.Group
	}
	return perms&bit == bit
}

// AuthorizeWrite decides whether user may write fields of rec, reading the user
// as stored now within q (the writer's transaction).
func (c *Checker) AuthorizeWrite(ctx context.Context, q store.Querier, user int64, rec content.Record, fields []string) error {
	a, err := LoadActor(withoutActorMemo(ctx), c.dir, q, user) // the rights as they are now
	if errors.Is(err, ErrNoUser) {
		return deny("user %d does not exist", user)
	}
	if err != nil {
		return err
	}
	if !a.Active() {
		return deny("user %d is disabled", user)
	}
	if rec.Deleted {
		return deny("%s:%d is deleted", rec.Table, rec.UID)
	}
	if rec.Workspace != 0 {
		return deny("%s:%d is a workspace version", rec.Table, rec.UID)
	}
	if a.IsAdmin() {
		return nil
	}
	if rec.EditLock {
		return deny("%s:%d is locked for editing (only administrators may change it)", rec.Table, rec.UID)
	}
	if !a.CanModifyTable(rec.Table) {
		return deny("table %s may not be modified", rec.Table)
	}
	if f, ok := a.MayEditRecordType(rec); !ok {
		return deny("%s:%d is of %s %q, which the user's groups do not allow explicitly", rec.Table, rec.UID, f, rec.Fields[f])
	}
	if !a.MayEditLanguage(rec.Language) {
		return deny("language %d may not be edited", rec.Language)
	}
	schemas, err := content.LoadSchemas(ctx, q)
	if err != nil {
		return err
	}
	t, ok := schemas.Table(rec.Table)
	if !ok {
		return deny("unknown table %s", rec.Table)
	}
	for _, name := range fields {
		f, ok := t.Field(name)
		if !ok || !a.MayEditField(rec.Table, name, f.Exclude) {
			return deny("field %s.%s may not be edited", rec.Table, name)
		}
	}
	page, bit := rec.PID, content.PermContent
	if rec.Table == "pages" {
		page, bit = rec.UID, content.PermEdit
	}
	if page == 0 {
		return deny("%s:%d is on the root level", rec.Table, rec.UID)
	}
	if rec.Table == "pages" && (rec.Language <= 0 || rec.L10nParent == 0) {
		ok, err = c.pagePermOf(ctx, q, a, rec, bit) // the page decides for itself
	} else {
		ok, err = c.pagePerm(ctx, q, a, page, bit)
	}
	if err != nil {
		return err
	}
	if !ok {
		return deny("page %d may not be edited", page)
	}
	return nil
}
