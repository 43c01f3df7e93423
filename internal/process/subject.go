package process

import (
	"context"
	"errors"
	"fmt"

	"waymark/internal/access"
	"waymark/internal/content"
)

// SubjectAllowed reports whether the user may work on the subject record
// now, reading the user as stored at this call (ADR-228 item 3): the start
// check (g), and the check a resumed run repeats to keep its subject (L3.8).
// A missing or disabled user may work on nothing. A failed read is an error.
func (p *Preparer) SubjectAllowed(ctx context.Context, userUID int64, ref content.Ref) (bool, error) {
	a, err := access.LoadActor(ctx, p.dir, p.db, userUID)
	if errors.Is(err, access.ErrNoUser) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("acting user %d: %w", userUID, err)
	}
	return p.subjectAllowed(ctx, a, ref)
}

// subjectAllowed is the subject rule for an actor read in this request:
//
//   - the table is readable (select or modify) — L3.2;
//   - the subject language is one the actor may edit; "all languages" (-1)
//     names only a record in all languages — L3.3;
//   - the record exists, is not deleted and is live (workspace 0) — L3.4;
//   - a translation is the subject only in its own language; a record in the
//     default language or in all languages in any language the actor may
//     edit — L3.6;
//   - a record on the root level (a page uid 0, any other record on pid 0)
//     is for administrators only — L3.7;
//   - for an editor, the page (a page itself, else the record's pid) is live,
//     in a web mount and showable — L3.5 (for a translated page, the
//     default-language page decides, as everywhere in access).
func (p *Preparer) subjectAllowed(ctx context.Context, a *access.Actor, ref content.Ref) (bool, error) {
	if !a.Active() || !a.CanReadTable(ref.Table) {
		return false, nil
	}
	if ref.Language < content.LanguageAll || !a.MayEditLanguage(ref.Language) {
		return false, nil
	}
	rec, err := p.src.Get(ctx, p.db, ref.Table, ref.UID)
	if errors.Is(err, content.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("subject %s: %w", ref, err)
	}
	if !rec.Live() {
		return false, nil
	}
	switch {
	case rec.Language > content.LanguageDefault && ref.Language != rec.Language:
		return false, nil
	case ref.Language == content.LanguageAll && rec.Language != content.LanguageAll:
		return false, nil
	}
	page := rec.PID
	if rec.Table == "pages" {
		page = rec.UID
	}
	if page <= 0 || a.IsAdmin() {
		return a.IsAdmin(), nil
	}
	ok, err := p.checker.ActorMayShowPage(ctx, a, page)
	if err != nil {
		return false, fmt.Errorf("subject %s: %w", ref, err)
	}
	return ok, nil
}
