package content

import (
	"context"
	"errors"
	"fmt"

	"waymark/internal/store"
)

// Source is where the CMS records and the site languages are read from: the
// built-in one (Builtin, Waymark's own tables records and languages) or a
// CMS beside Waymark (a TYPO3 database, package typo3/live). Every rule of
// the specification built on records (page-show, mounts, the translation
// rule, root level, open-point visibility, highlight targets) is written
// above this seam, in the services that read through it, so it holds for
// every source alike.
//
// A source is a value handed to the constructors of the services that read
// records where the application is wired (app.New, from the installation a
// command opened), the way River hands its driver to NewClient; nothing
// looks it up by database. A nil source is the built-in one (OrBuiltin).
//
// q is the Waymark store handle the call is made in (a transaction or the
// pool); a source on another database does not use it. The table schemas
// (labels, exclude flags, recommended lengths) are Waymark's for every
// source: LoadSchemas.
type Source interface {
	// Get reads one record, deleted or not; ErrNotFound when none exists.
	Get(ctx context.Context, q store.Querier, table string, uid int64) (Record, error)
	// OnPage lists the live records of table on page pid in one of
	// languages (none: every language).
	OnPage(ctx context.Context, q store.Querier, table string, pid int64, languages ...int64) ([]Record, error)
	// Translation returns the live translation of a default-language record
	// into language, or ErrNotFound.
	Translation(ctx context.Context, q store.Querier, table string, parent, language int64) (Record, error)
	// TranslationLanguages lists the languages (> 0) of the live translations of parent, in order.
	TranslationLanguages(ctx context.Context, q store.Querier, table string, parent int64) ([]int64, error)
	// Heads reads the records of table among uids without their fields, deleted or not.
	Heads(ctx context.Context, q store.Querier, table string, uids []int64) ([]Record, error)
	// Languages lists the site languages other than the default one (uid 0), by uid.
	Languages(ctx context.Context, q store.Querier) ([]SiteLanguage, error)
}

// ErrExternalSource refuses a write through the built-in Writer while the
// records come from another source: it would change only Waymark's own
// copy, which that source does not read.
var ErrExternalSource = errors.New("the records come from TYPO3: the built-in writer cannot change them (write-back into TYPO3 is not configured); nothing was written")

// Builtin is the built-in source: Waymark's own tables, filled by the
// fixture import (the default; `waymark demo` runs on it).
type Builtin struct{}

var _ Source = Builtin{}

// OrBuiltin returns src, or the built-in source when src is nil: a nil
// Source handed to a constructor (or set in a Config or Deps) is Builtin.
func OrBuiltin(src Source) Source {
	if src == nil {
		return Builtin{}
	}
	return src
}

// IsBuiltin reports whether src is the built-in source (nil is).
func IsBuiltin(src Source) bool {
	_, builtin := OrBuiltin(src).(Builtin)
	return builtin
}

// Language returns the language uid of a record of src, deleted or not; ok
// is false when there is none.
func Language(ctx context.Context, src Source, q store.Querier, table string, uid int64) (lang int64, ok bool, err error) {
	src = OrBuiltin(src)
	if b, isBuiltin := src.(Builtin); isBuiltin {
		return b.Language(ctx, q, table, uid)
	}
	r, err := src.Get(ctx, q, table, uid)
	if errors.Is(err, ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("language of %s:%d: %w", table, uid, err)
	}
	return r.Language, true, nil
}

// LiveAmong returns which of uids are live records of table in src (in the
// live workspace, not deleted).
func LiveAmong(ctx context.Context, src Source, q store.Querier, table string, uids []int64) (map[int64]bool, error) {
	src = OrBuiltin(src)
	if b, isBuiltin := src.(Builtin); isBuiltin {
		return b.LiveAmong(ctx, q, table, uids)
	}
	heads, err := src.Heads(ctx, q, table, uids)
	if err != nil {
		return nil, err
	}
	live := map[int64]bool{}
	for _, h := range heads {
		if h.Live() {
			live[h.UID] = true
		}
	}
	return live, nil
}

// LanguageTitle returns the title of site language uid of src; ok is false
// when there is no such language.
func LanguageTitle(ctx context.Context, src Source, q store.Querier, uid int64) (title string, ok bool, err error) {
	src = OrBuiltin(src)
	if b, isBuiltin := src.(Builtin); isBuiltin {
		return b.LanguageTitle(ctx, q, uid)
	}
	all, err := src.Languages(ctx, q)
	if err != nil {
		return "", false, fmt.Errorf("language %d: %w", uid, err)
	}
	for _, l := range all {
		if l.UID == uid {
			return l.Title, true, nil
		}
	}
	return "", false, nil
}
