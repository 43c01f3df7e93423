package access

import (
	"context"
	"slices"
	"sort"
	"time"

	"waymark/internal/fault"
	"waymark/internal/store"
)

// Directory is where backend users, their groups (with subgroups) and the
// rights these give are read from: the built-in one (BuiltinDirectory,
// Waymark's tables be_users and be_groups) or a CMS beside Waymark (a TYPO3
// database, package typo3/live). A directory answers who a user is and
// which rights the user holds now; every decision built on them (the
// Checker's table, field, language, page and mount rules, the subject
// check, open-point visibility) is written above this seam, once, for every
// directory alike.
//
// q is the Waymark store handle the call is made in; a directory on another
// database reads Waymark's own part of a user there (its grants).
//
// A directory is a value handed to the constructors of the services that
// read users where the application is wired (app.New, from the installation
// a command opened); nothing looks it up by database. A nil directory is
// the built-in one (OrBuiltin).
type Directory interface {
	// LoadActor reads the user with its rights as stored now; ErrNoUser when
	// there is none. A user who exists but may not work now (disabled,
	// expired) is an actor with Disabled set.
	LoadActor(ctx context.Context, q store.Querier, uid int64) (*Actor, error)
	// LoadUser reads one user; ErrNoUser when there is none.
	LoadUser(ctx context.Context, q store.Querier, uid int64) (User, error)
	// LoadUserByName reads one user by username; ErrNoUser when there is none.
	LoadUserByName(ctx context.Context, q store.Querier, username string) (User, error)
}

// BuiltinDirectory is the built-in directory: Waymark's own be_users and
// be_groups, filled by the fixture import and the administration.
type BuiltinDirectory struct{}

var _ Directory = BuiltinDirectory{}

// OrBuiltin returns d, or the built-in directory when d is nil: a nil
// Directory handed to a constructor (or set in a Config or Deps) or to a
// function of this package is BuiltinDirectory.
func OrBuiltin(d Directory) Directory {
	if d == nil {
		return BuiltinDirectory{}
	}
	return d
}

// ErrManagedElsewhere refuses Waymark's administration of users and groups
// while they come from TYPO3: they are created, changed and disabled there.
var ErrManagedElsewhere = fault.New(fault.Conflict, "managed_elsewhere",
	"users and groups come from TYPO3 (--typo3): create, change and disable them in TYPO3's backend")

// External reports whether d is a directory other than the built-in one
// (then Waymark's administration does not create or change its users).
func External(d Directory) bool {
	_, builtin := OrBuiltin(d).(BuiltinDirectory)
	return !builtin
}

// LoadActor reads the user and its groups as stored now, from d (nil: the
// built-in directory), and resolves them. Within a request that carries an
// actor memo (WithActorMemo), a directory beside Waymark is read once per
// user for a short while.
func LoadActor(ctx context.Context, d Directory, q store.Querier, uid int64) (*Actor, error) {
	d = OrBuiltin(d)
	memo := memoOf(ctx, d)
	if a := memo.get(uid); a != nil {
		return a, nil
	}
	at := time.Now()
	a, err := d.LoadActor(ctx, q, uid)
	if err == nil {
		memo.put(uid, a, at)
	}
	return a, err
}

// Rights are what a directory that resolves groups itself (as TYPO3 does)
// found a user to hold, in Waymark's terms: NonExcludeFields as
// "table:field" with Waymark's field names.
type Rights struct {
	AllGroups        []int64 // the user's groups and all their subgroups
	TablesSelect     []string
	TablesModify     []string
	NonExcludeFields []string
	Languages        []int64 // empty: every language
	Mounts           []int64
	Grants           []string
	// AuthMode names, per table, the fields whose value decides whether a
	// record may be changed at all (TYPO3's TCA authMode explicitAllow, as
	// tt_content.CType); ExplicitAllow are the "table:field:value" entries
	// allowed (TYPO3's explicit_allowdeny). Nil AuthMode: no such rule (the
	// built-in directory).
	AuthMode      map[string][]string
	ExplicitAllow []string
}

// NewActor returns the actor of u with rights r, resolved by a directory.
// u's own Groups, Languages, Mounts and Grants are not resolved again.
func NewActor(u User, r Rights) *Actor {
	a := &Actor{
		User:         u,
		AllGroups:    slices.Clone(r.AllGroups),
		tablesSelect: map[string]bool{},
		tablesModify: map[string]bool{},
		nonExclude:   map[string]bool{},
		languages:    map[int64]bool{},
		grants:       map[string]bool{},
	}
	for _, t := range r.TablesSelect {
		a.tablesSelect[t] = true
	}
	for _, t := range r.TablesModify {
		a.tablesModify[t] = true
	}
	for _, f := range r.NonExcludeFields {
		a.nonExclude[f] = true
	}
	for _, l := range r.Languages {
		a.languages[l] = true
	}
	for _, g := range r.Grants {
		a.grants[g] = true
	}
	if len(r.AuthMode) > 0 {
		a.authMode = map[string][]string{}
		for t, fs := range r.AuthMode {
			a.authMode[t] = slices.Clone(fs)
		}
		a.explicitAllow = map[string]bool{}
		for _, e := range r.ExplicitAllow {
			a.explicitAllow[e] = true
		}
	}
	a.mounts = slices.Clone(r.Mounts)
	slices.Sort(a.mounts)
	a.mounts = slices.Compact(a.mounts)
	sort.Slice(a.AllGroups, func(i, j int) bool { return a.AllGroups[i] < a.AllGroups[j] })
	a.AllGroups = slices.Compact(a.AllGroups)
	return a
}
