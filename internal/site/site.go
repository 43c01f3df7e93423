package site

import (
	"context"
	"errors"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/fault"
	"waymark/internal/store"
)

// ErrNotFound answers an unknown page and one the user may not show alike.
var ErrNotFound = fault.New(fault.NotFound, "not_found", "not found")

// Site reads pages for the screens.
type Site struct {
	db      *store.DB
	src     content.Source
	checker *access.Checker
}

// New returns the site reader of db, reading the records of src (nil: the
// built-in source) and deciding with checker.
func New(db *store.DB, src content.Source, checker *access.Checker) *Site {
	return &Site{db: db, src: content.OrBuiltin(src), checker: checker}
}

// Language is a site language.
type Language = content.SiteLanguage

// Languages lists the site languages the actor may edit, by uid.
func (s *Site) Languages(ctx context.Context, a *access.Actor) ([]Language, error) {
	all, err := s.src.Languages(ctx, s.db)
	if err != nil {
		return nil, err
	}
	out := []Language{}
	for _, l := range all {
		if a.MayEditLanguage(l.UID) {
			out = append(out, l)
		}
	}
	return out, nil
}

// Node is a page of the tree: its default-language title and the pages
// below it the user may show.
type Node struct {
	UID          int64   `json:"uid"`
	Title        string  `json:"title"`
	Translations []int64 `json:"translations"` // languages with a live translation
	Children     []Node  `json:"children"`
}

// maxPages bounds the pages a tree walks (a cycle or a huge site fails closed).
const maxPages = 5000

// Tree returns the live default-language pages the actor may show, as a
// tree: a page the actor may not show is left out and its shown descendants
// hang below its nearest shown ancestor (or at the top, like mounts).
func (s *Site) Tree(ctx context.Context, a *access.Actor) ([]Node, error) {
	seen := 0
	shown := access.NewPageTree(s.db, s.src, a) // one batch read of the page rule for the whole tree
	var walk func(pid int64, depth int) ([]Node, error)
	walk = func(pid int64, depth int) ([]Node, error) {
		if depth > 100 {
			return nil, errors.New("page tree too deep")
		}
		pages, err := s.src.OnPage(ctx, s.db, "pages", pid, content.LanguageDefault)
		if err != nil {
			return nil, err
		}
		out := []Node{}
		for _, p := range pages {
			if seen++; seen > maxPages {
				return nil, errors.New("page tree too large")
			}
			below, err := walk(p.UID, depth+1)
			if err != nil {
				return nil, err
			}
			if err := shown.Load(ctx, []int64{p.UID}); err != nil {
				return nil, err
			}
			if !shown.MayShow(p.UID) {
				out = append(out, below...)
				continue
			}
			n := Node{UID: p.UID, Title: p.Fields["title"], Children: below, Translations: []int64{}}
			if n.Translations, err = s.translations(ctx, p.UID); err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	}
	return walk(0, 0)
}

func (s *Site) translations(ctx context.Context, page int64) ([]int64, error) {
	return s.src.TranslationLanguages(ctx, s.db, "pages", page)
}

// page loads a live default-language page the actor may show; a
// translation's uid names its default-language page.
func (s *Site) page(ctx context.Context, a *access.Actor, uid int64) (content.Record, error) {
	p, err := s.src.Get(ctx, s.db, "pages", uid)
	if errors.Is(err, content.ErrNotFound) {
		return content.Record{}, ErrNotFound
	}
	if err != nil {
		return content.Record{}, err
	}
	if p.Language > 0 && p.L10nParent > 0 {
		if p, err = s.src.Get(ctx, s.db, "pages", p.L10nParent); errors.Is(err, content.ErrNotFound) {
			return content.Record{}, ErrNotFound
		} else if err != nil {
			return content.Record{}, err
		}
	}
	ok, err := s.checker.ActorMayShowPageRecord(ctx, a, p)
	if err != nil {
		return content.Record{}, err
	}
	if !ok || !p.Live() {
		return content.Record{}, ErrNotFound
	}
	return p, nil
}
