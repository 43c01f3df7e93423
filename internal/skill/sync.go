package skill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"waymark/internal/store"
)

// SyncReport says what one Sync changed, by identifier, each list sorted.
type SyncReport struct {
	Source    int64    `json:"source"`
	Added     []string `json:"added"`     // new skills, stored disabled
	Changed   []string `json:"changed"`   // a new digest (or front matter) stored
	Disabled  []string `json:"disabled"`  // enabled skills disabled because their digest changed
	Orphaned  []string `json:"orphaned"`  // vanished upstream: orphaned and disabled
	Restored  []string `json:"restored"`  // orphaned skills that came back (still disabled)
	Unchanged []string `json:"unchanged"` // same digest and front matter
}

// found is one SKILL.md read from disk.
type found struct {
	identifier string
	version    Version
	fm         string
}

// Sync brings a directory source up to date with its folder: every immediate
// subfolder holding a SKILL.md is a skill whose identifier is the folder name
// (folders whose names start with "." are skipped). New skills arrive
// disabled; a changed digest is stored, and an enabled skill whose digest
// changed is disabled and audited (disabled_on_change); a skill whose folder
// vanished is orphaned and disabled (audited). Everything is read and checked
// before anything is written, and the writes are one transaction: a missing
// or unreadable source folder (ErrSourceUnreadable), a SKILL.md that does not
// parse or is over MaxSize, or allowed-tools naming an unknown tool is an
// error and changes nothing.
func (s *Store) Sync(ctx context.Context, sourceUID int64) (SyncReport, error) {
	src, err := s.SourceGet(ctx, sourceUID)
	if err != nil {
		return SyncReport{}, err
	}
	if src.Type != Directory {
		return SyncReport{}, invalid("source", "source %d is a %s source: only directory sources sync", src.UID, src.Type)
	}
	skills, err := s.readSource(src.Path)
	if err != nil {
		if ev := refusalEvent(err); ev != "" {
			if aerr := s.audit(ctx, s.db, AuditEntry{Event: ev, Source: src.UID, Detail: err.Error()}); aerr != nil {
				return SyncReport{}, fmt.Errorf("sync source %d: %w (audit: %w)", src.UID, err, aerr)
			}
		}
		return SyncReport{}, fmt.Errorf("sync source %d: %w", src.UID, err)
	}
	rep := SyncReport{Source: src.UID}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		// Lock the source: concurrent syncs of one source publish one after the other.
		if _, err := sourceGet(ctx, tx, src.UID, forUpdate(tx)); err != nil {
			return err
		}
		rep = SyncReport{Source: src.UID}
		return s.publish(ctx, tx, src, skills, &rep)
	})
	if err != nil {
		return SyncReport{}, fmt.Errorf("sync source %d: %w", src.UID, err)
	}
	return rep, nil
}

// refusalEvent is the audit event of a sync refused for leaving a folder, or "".
func refusalEvent(err error) AuditEvent {
	var out *outsideRootError
	var link *symlinkError
	switch {
	case errors.As(err, &out):
		return EventSyncRefusedOutside
	case errors.As(err, &link):
		return EventSyncRefusedSymlink
	}
	return ""
}

// readSource reads and checks every skill of a source folder (path as
// stored), which must lie inside the skills root with its symlinks
// resolved. Messages name paths relative to the root.
func (s *Store) readSource(path string) ([]found, error) {
	dir, err := s.realSourceDir(path)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrSourceUnreadable, s.rel(dir))
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a folder", ErrSourceUnreadable, s.rel(dir))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s cannot be listed", ErrSourceUnreadable, s.rel(dir))
	}
	var out []found
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		folder := filepath.Join(dir, e.Name())
		what := s.rel(filepath.Join(folder, "SKILL.md"))
		text, err := s.readSkillFile(folder, what)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := validIdentifier(e.Name()); err != nil {
			return nil, fmt.Errorf("folder %q: %w", s.rel(folder), err)
		}
		v, err := Parse(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err) // a *ParseError is ErrInvalid
		}
		v, fm, err := s.checkParsed(what, v, text)
		if err != nil {
			return nil, err
		}
		out = append(out, found{identifier: e.Name(), version: v, fm: fm})
	}
	return out, nil
}

// readSkillFile reads the SKILL.md of a skill folder, at most MaxSize+1
// bytes of it (Parse refuses a longer one), and only if it is a regular file
// inside the folder: a symlink may point within the folder, never out of it.
// what names the file in messages.
func (s *Store) readSkillFile(folder, what string) ([]byte, error) {
	path := filepath.Join(folder, "SKILL.md")
	if _, err := os.Lstat(path); err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, &symlinkError{invalid("SKILL.md", "%s is a symlink that does not resolve", what)}
	}
	if !within(folder, real) {
		return nil, &symlinkError{invalid("SKILL.md", "%s is a symlink leading out of its skill folder", what)}
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, invalid("SKILL.md", "%s is not a regular file", what)
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, fmt.Errorf("%w: %s cannot be read", ErrSourceUnreadable, what)
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxSize+1))
}

// publish writes the outcome of a sync in tx.
func (s *Store) publish(ctx context.Context, tx *store.Tx, src Source, skills []found, rep *SyncReport) error {
	stored, err := store.Collect(ctx, tx, scanSkill, "SELECT "+skillColumns+" FROM skills WHERE source_uid = ?", src.UID)
	if err != nil {
		return err
	}
	existing := map[string]Skill{}
	for _, k := range stored {
		existing[k.Identifier] = k
	}
	now := s.now()
	for _, f := range skills {
		old, ok := existing[f.identifier]
		delete(existing, f.identifier)
		d := f.version.Digest()
		if !ok {
			uid, err := s.insertSkill(ctx, tx, newSkill{source: src.UID, identifier: f.identifier, version: f.version, frontMatter: f.fm})
			if err != nil {
				return err
			}
			rep.Added = append(rep.Added, f.identifier)
			if err := s.audit(ctx, tx, AuditEntry{Event: EventSynced, Skill: uid, Source: src.UID, Digest: d, Detail: "added"}); err != nil {
				return err
			}
			continue
		}
		changed := old.Digest() != d
		if !changed && old.RawFrontMatter == f.fm && !old.Orphaned {
			rep.Unchanged = append(rep.Unchanged, f.identifier)
			continue
		}
		enabled := old.Enabled && !changed
		v := f.version
		if _, err := tx.Exec(ctx, `UPDATE skills SET name = ?, description = ?, body = ?, support = ?, allowed_tools = ?,
			process = ?, raw_front_matter = ?, digest = ?, enabled = ?, orphaned = FALSE, updated_at = ? WHERE uid = ?`,
			v.Name, v.Description, v.Body, v.Support, encodeTools(v.AllowedTools), v.Process, f.fm, d, enabled, now, old.UID); err != nil {
			return fmt.Errorf("update skill %q: %w", f.identifier, err)
		}
		detail := "changed"
		switch {
		case old.Orphaned:
			detail = "restored"
			rep.Restored = append(rep.Restored, f.identifier)
		case changed:
			rep.Changed = append(rep.Changed, f.identifier)
		default:
			detail = "front matter changed"
			rep.Changed = append(rep.Changed, f.identifier)
		}
		if err := s.audit(ctx, tx, AuditEntry{Event: EventSynced, Skill: old.UID, Source: src.UID, Digest: d, Detail: detail}); err != nil {
			return err
		}
		if old.Enabled && changed {
			rep.Disabled = append(rep.Disabled, f.identifier)
			if err := s.audit(ctx, tx, AuditEntry{Event: EventDisabledOnChange, Skill: old.UID, Source: src.UID, Digest: d,
				Detail: "was " + old.Digest()}); err != nil {
				return err
			}
		}
	}
	for id, old := range existing {
		if old.Orphaned {
			continue
		}
		if _, err := tx.Exec(ctx, "UPDATE skills SET orphaned = TRUE, enabled = FALSE, updated_at = ? WHERE uid = ?", now, old.UID); err != nil {
			return fmt.Errorf("orphan skill %q: %w", id, err)
		}
		rep.Orphaned = append(rep.Orphaned, id)
		if err := s.audit(ctx, tx, AuditEntry{Event: EventOrphaned, Skill: old.UID, Source: src.UID, Digest: old.Digest()}); err != nil {
			return err
		}
	}
	for _, l := range [][]string{rep.Added, rep.Changed, rep.Disabled, rep.Orphaned, rep.Restored, rep.Unchanged} {
		sort.Strings(l)
	}
	return nil
}
