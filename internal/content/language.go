package content

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"waymark/internal/store"
)

// SiteLanguage is a row of the site's languages (the language uid 0 is the
// default language and has no row).
type SiteLanguage struct {
	UID    int64  `json:"uid"`
	Title  string `json:"title"`
	Locale string `json:"locale"`
}

// Languages lists the site languages by uid (the languages
// table is read here only).
func (Builtin) Languages(ctx context.Context, q store.Querier) ([]SiteLanguage, error) {
	out, err := store.Collect(ctx, q, func(sc store.Scanner) (SiteLanguage, error) {
		var l SiteLanguage
		err := sc.Scan(&l.UID, &l.Title, &l.Locale)
		return l, err
	}, "SELECT uid, title, locale FROM languages ORDER BY uid")
	if err != nil {
		return nil, fmt.Errorf("languages: %w", err)
	}
	return out, nil
}

// LanguageTitle returns the title of site language uid; ok is false when
// there is no such language. It is kept for a settings generation (every
// change of the languages moves it, migration 00017): each read of a
// conversation shows it.
func (Builtin) LanguageTitle(ctx context.Context, q store.Querier, uid int64) (title string, ok bool, err error) {
	t, err := languageTitles.Get(ctx, q, uid, func(ctx context.Context, q store.Querier) (languageTitle, error) {
		var t languageTitle
		err := q.QueryRow(ctx, "SELECT title FROM languages WHERE uid = ?", uid).Scan(&t.title)
		if errors.Is(err, sql.ErrNoRows) {
			return languageTitle{}, nil
		}
		t.ok = err == nil
		return t, err
	})
	if err != nil {
		return "", false, fmt.Errorf("language %d: %w", uid, err)
	}
	return t.title, t.ok, nil
}

// languageTitle is what LanguageTitle keeps of a language: its title, or
// that there is none.
type languageTitle struct {
	title string
	ok    bool
}

var languageTitles = store.NewGenCache[int64, languageTitle]("languages")

// PutLanguage stores (replaces) a site language.
func PutLanguage(ctx context.Context, q store.Querier, l SiteLanguage) error {
	if _, err := q.Exec(ctx, `INSERT INTO languages (uid, title, locale) VALUES (?, ?, ?)
		ON CONFLICT (uid) DO UPDATE SET title = excluded.title, locale = excluded.locale`, l.UID, l.Title, l.Locale); err != nil {
		return fmt.Errorf("store language %d: %w", l.UID, err)
	}
	return nil
}
