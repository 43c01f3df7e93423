package access

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"waymark/internal/content"
	"waymark/internal/fault"
	"waymark/internal/store"
)

// ErrInvalid is matched (errors.Is) by every *FieldError (400 invalid).
var ErrInvalid = fault.Detailed(fault.Invalid, "invalid", "invalid")

// Errors of the administration of users and groups, with their
// kinds and wire codes (package fault).
var (
	// ErrUsernameTaken: another user has the username.
	ErrUsernameTaken = fault.Detailed(fault.Conflict, "conflict", "username is taken")
	// ErrLastAdmin: the change would leave no active administrator.
	ErrLastAdmin = fault.New(fault.Conflict, "last_admin",
		"the change would leave no active administrator; make another user administrator first")
	// ErrExists: a create names a uid that exists.
	ErrExists = fault.Detailed(fault.Conflict, "conflict", "uid exists")
	// ErrNoGroup: no group has the uid.
	ErrNoGroup = fault.New(fault.NotFound, "not_found", "no such group")
)

// FieldError is a refused user or group: Field is the JSON name of the
// offending field.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap lets errors.Is(err, ErrInvalid) match.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Fault is ErrInvalid with the field and the reason as the message.
func (e *FieldError) Fault() *fault.Error { return ErrInvalid.With("%s", e.Error()) }

// FieldErrors are every refused field of one change, in form order: a
// form shows them all in one answer. errors.As(err, &*FieldError) finds the
// first, so an API answer names the first refused field.
type FieldErrors []error

func (e FieldErrors) Error() string {
	msgs := make([]string, len(e))
	for i, f := range e {
		msgs[i] = f.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap gives every field error to errors.Is and errors.As.
func (e FieldErrors) Unwrap() []error { return e }

// SplitFieldErrors is each error of a FieldErrors, err alone, or none for nil.
func SplitFieldErrors(err error) []error {
	var all FieldErrors
	switch {
	case errors.As(err, &all):
		return all
	case err != nil:
		return []error{err}
	}
	return nil
}

func invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// knownGrants is the closed set of grants a group or user may hold.
var knownGrants = map[string]bool{GrantApprove: true, GrantSkillApprove: true}

// checker validates the references of users and groups against the store.
type refChecker struct {
	ctx context.Context
	src content.Source
	dir Directory
	q   store.Querier
}

func (c refChecker) groups(field string, ids []int64) error {
	for _, id := range ids {
		ok, err := GroupExists(c.ctx, c.dir, c.q, id)
		if err != nil {
			return err
		}
		if !ok {
			return invalid(field, "no group %d", id)
		}
	}
	return nil
}

func (c refChecker) languages(ids []int64) error {
	for _, id := range ids {
		_, ok, err := content.LanguageTitle(c.ctx, c.src, c.q, id)
		if err != nil {
			return fmt.Errorf("check language %d: %w", id, err)
		}
		if !ok {
			return invalid("languages", "no language %d", id)
		}
	}
	return nil
}

// UserExists reports whether a backend user of dir (nil: the built-in
// directory) has the uid.
func UserExists(ctx context.Context, dir Directory, q store.Querier, uid int64) (bool, error) {
	if External(dir) {
		_, err := dir.LoadUser(ctx, q, uid)
		if errors.Is(err, ErrNoUser) {
			return false, nil
		}
		return err == nil, err
	}
	var n int
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM be_users WHERE uid = ?", uid).Scan(&n); err != nil {
		return false, fmt.Errorf("check user %d: %w", uid, err)
	}
	return n > 0, nil
}

// GroupExists reports whether a backend group has the uid — for packages
// that refer to groups (a configuration's allowed groups) without reading
// their table. dir is the directory (nil: the built-in one).
func GroupExists(ctx context.Context, dir Directory, q store.Querier, uid int64) (bool, error) {
	if g, ok := dir.(interface {
		GroupExists(ctx context.Context, uid int64) (bool, error)
	}); ok {
		return g.GroupExists(ctx, uid)
	}
	var n int
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM be_groups WHERE uid = ?", uid).Scan(&n); err != nil {
		return false, fmt.Errorf("check group %d: %w", uid, err)
	}
	return n > 0, nil
}

func (c refChecker) mounts(ids []int64) error {
	for _, id := range ids {
		p, err := c.src.Get(c.ctx, c.q, "pages", id)
		if errors.Is(err, content.ErrNotFound) || (err == nil && p.Deleted) {
			return invalid("mounts", "no page %d", id)
		}
		if err != nil {
			return fmt.Errorf("check page %d: %w", id, err)
		}
	}
	return nil
}

// grants checks a list of grants: known ones, each at most once — grants
// are a set, and a list naming one twice is refused rather than stored twice.
func grants(gs []string) error {
	seen := map[string]bool{}
	for _, g := range gs {
		if !knownGrants[g] {
			return invalid("grants", "unknown grant %q (want approve or skill_approve)", g)
		}
		if seen[g] {
			return invalid("grants", "grant %q named twice (grants are a set)", g)
		}
		seen[g] = true
	}
	return nil
}

func (c refChecker) tables(field string, ts []string) error {
	if len(ts) == 0 {
		return nil
	}
	schemas, err := content.LoadSchemas(c.ctx, c.q)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if _, ok := schemas.Table(t); !ok {
			return invalid(field, "unknown table %q (want one of %s)", t, strings.Join(schemas.Names(), ", "))
		}
	}
	return nil
}

func (c refChecker) tableFields(field string, tfs []string) error {
	if len(tfs) == 0 {
		return nil
	}
	schemas, err := content.LoadSchemas(c.ctx, c.q)
	if err != nil {
		return err
	}
	for _, tf := range tfs {
		table, name, ok := strings.Cut(tf, ":")
		if !ok {
			return invalid(field, "want table:field, got %q", tf)
		}
		t, ok := schemas.Table(table)
		if !ok {
			return invalid(field, "unknown table %q", table)
		}
		if _, ok := t.Field(name); !ok {
			return invalid(field, "no field %q in table %s", name, table)
		}
	}
	return nil
}
