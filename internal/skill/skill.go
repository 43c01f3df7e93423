package skill

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"waymark/internal/store"
)

// Skill is one stored skill: its live version and its switches.
type Skill struct {
	UID    int64 `json:"uid"`
	Source int64 `json:"source"`
	// Identifier is display text, unique per source: the folder name of a
	// directory skill, the author's choice for a backend skill.
	Identifier string  `json:"identifier"`
	Version    Version `json:"version"`
	// RawFrontMatter is the YAML front matter as read (directory) or rendered
	// (backend); not part of the digest.
	RawFrontMatter string `json:"rawFrontMatter"`
	// Enabled is the site-wide switch: it gates new use. Skills arrive disabled.
	Enabled bool `json:"enabled"`
	// Orphaned: the skill disappeared from its directory source.
	Orphaned  bool      `json:"orphaned"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Digest is the version digest of the live fields.
func (k Skill) Digest() string { return k.Version.Digest() }

const skillColumns = `uid, source_uid, identifier, name, description, body, support, allowed_tools, process,
	raw_front_matter, enabled, orphaned, updated_at`

func scanSkill(sc interface{ Scan(...any) error }) (Skill, error) {
	var k Skill
	var tools string
	var updated int64
	if err := sc.Scan(&k.UID, &k.Source, &k.Identifier, &k.Version.Name, &k.Version.Description, &k.Version.Body,
		&k.Version.Support, &tools, &k.Version.Process, &k.RawFrontMatter, &k.Enabled, &k.Orphaned, &updated); err != nil {
		return Skill{}, err
	}
	t, err := decodeTools(tools)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %d: allowed_tools: %w", k.UID, err)
	}
	k.Version.AllowedTools, k.UpdatedAt = t, store.Time(updated)
	return k, nil
}

// encodeTools stores a declaration: "null" for none, else a JSON list.
func encodeTools(t []string) string {
	if t == nil {
		return "null"
	}
	b, _ := json.Marshal(t)
	return string(b)
}

func decodeTools(s string) ([]string, error) {
	if s == "null" {
		return nil, nil
	}
	t := []string{}
	if err := json.Unmarshal([]byte(s), &t); err != nil {
		return nil, err
	}
	return t, nil
}

func skillGet(ctx context.Context, q store.Querier, uid int64, suffix string) (Skill, error) {
	k, err := scanSkill(q.QueryRow(ctx, "SELECT "+skillColumns+" FROM skills WHERE uid = ?"+suffix, uid))
	if errors.Is(err, sql.ErrNoRows) {
		return Skill{}, fmt.Errorf("skill %d: %w", uid, ErrNotFound)
	}
	if err != nil {
		return Skill{}, fmt.Errorf("read skill %d: %w", uid, err)
	}
	return k, nil
}

// Names are what a conversation shows of its skill.
type Names struct {
	Identifier, Name string
	Local            LocalNames // the names in the UI languages, if any
}

// NamesOf returns the identifier and name of skill uid (ErrNotFound when
// there is none), kept for a settings generation (every change of the
// skills moves it, migration 00017): each read of a conversation shows them.
func (s *Store) NamesOf(ctx context.Context, uid int64) (Names, error) {
	return skillNames.Get(ctx, s.db, uid, func(ctx context.Context, q store.Querier) (Names, error) {
		var n Names
		var local string
		err := q.QueryRow(ctx, "SELECT identifier, name, names FROM skills WHERE uid = ?", uid).Scan(&n.Identifier, &n.Name, &local)
		if errors.Is(err, sql.ErrNoRows) {
			return Names{}, fmt.Errorf("skill %d: %w", uid, ErrNotFound)
		}
		if err != nil {
			return Names{}, fmt.Errorf("read skill %d: %w", uid, err)
		}
		if n.Local, err = decodeNames(local); err != nil {
			return Names{}, fmt.Errorf("read skill %d: names: %w", uid, err)
		}
		return n, nil
	})
}

var skillNames = store.NewGenCache[int64, Names]("skills")

// IdentifierOf returns the identifier of skill uid, enabled or not; ok is
// false when there is no such skill — for packages that name skills (open
// points) without reading their table.
func IdentifierOf(ctx context.Context, q store.Querier, uid int64) (ident string, ok bool, err error) {
	err = q.QueryRow(ctx, "SELECT identifier FROM skills WHERE uid = ?", uid).Scan(&ident)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("skill %d: %w", uid, err)
	}
	return ident, true, nil
}

// Get reads one skill; ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, uid int64) (Skill, error) {
	return skillGet(ctx, s.db, uid, "")
}

// GetTx is Get through q (a transaction that must see its own writes).
func (s *Store) GetTx(ctx context.Context, q store.Querier, uid int64) (Skill, error) {
	return skillGet(ctx, q, uid, "")
}

// ByIdentifierTx reads the skill of source with that identifier
// through q; ErrNotFound when there is none.
func (s *Store) ByIdentifierTx(ctx context.Context, q store.Querier, source int64, identifier string) (Skill, error) {
	k, err := scanSkill(q.QueryRow(ctx, "SELECT "+skillColumns+" FROM skills WHERE source_uid = ? AND identifier = ?", source, identifier))
	if errors.Is(err, sql.ErrNoRows) {
		return Skill{}, fmt.Errorf("skill %q of source %d: %w", identifier, source, ErrNotFound)
	}
	if err != nil {
		return Skill{}, fmt.Errorf("read skill %q of source %d: %w", identifier, source, err)
	}
	return k, nil
}

// List reads the skills of one source (every source when sourceUID is
// 0), orphaned ones included, ordered by uid.
func (s *Store) List(ctx context.Context, sourceUID int64) ([]Skill, error) {
	out, err := store.Collect(ctx, s.db, scanSkill, "SELECT "+skillColumns+" FROM skills WHERE ? = 0 OR source_uid = ? ORDER BY uid",
		sourceUID, sourceUID)
	if err != nil {
		return nil, fmt.Errorf("list skills: %w", err)
	}
	return out, nil
}

// check validates a version as a SKILL.md would be: it renders v, refuses a
// text over MaxSize, parses it back (so a backend skill obeys exactly the
// rules of a file) and refuses allowed-tools naming a tool the registry does
// not hold. It returns the parsed, normalised version and its front matter.
func (s *Store) check(what string, v Version) (Version, string, error) {
	text := Render(v)
	if len(text) > MaxSize {
		return Version{}, "", invalid("SKILL.md", "%s is %d bytes, over the limit of %d", what, len(text), MaxSize)
	}
	parsed, err := Parse(text)
	if err != nil {
		return Version{}, "", fmt.Errorf("%s: %w", what, err) // a *ParseError is ErrInvalid
	}
	return s.checkParsed(what, parsed, text)
}

// checkParsed is the tool check of check for a version parsed from text.
func (s *Store) checkParsed(what string, v Version, text []byte) (Version, string, error) {
	v = v.Normalized()
	for _, t := range v.AllowedTools {
		if !s.known(t) {
			return Version{}, "", invalid("allowed-tools", "%s names the unknown tool %q", what, t)
		}
	}
	return v, frontMatter(text), nil
}

// frontMatter returns the YAML between the opening and closing "---" lines
// of a SKILL.md that Parse accepted ("" when there is none).
func frontMatter(text []byte) string {
	text = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))
	rest, ok := bytes.CutPrefix(text, []byte("---\n"))
	if !ok {
		return ""
	}
	if bytes.HasPrefix(rest, []byte("---")) {
		return ""
	}
	i := bytes.Index(rest, []byte("\n---"))
	if i < 0 {
		return ""
	}
	return string(rest[:i+1])
}

// HistoryEntry is one stored version of a backend skill.
type HistoryEntry struct {
	ID      int64     `json:"id"`
	Skill   int64     `json:"skill"`
	User    int64     `json:"user"`
	Version Version   `json:"version"`
	Digest  string    `json:"digest"`
	At      time.Time `json:"at"`
}

// History reads the edit history of a backend skill, oldest first.
func (s *Store) History(ctx context.Context, skillUID int64) ([]HistoryEntry, error) {
	out, err := store.Collect(ctx, s.db, func(sc store.Scanner) (HistoryEntry, error) {
		var h HistoryEntry
		var v string
		var at int64
		if err := sc.Scan(&h.ID, &h.Skill, &h.User, &v, &h.Digest, &at); err != nil {
			return h, err
		}
		if err := json.Unmarshal([]byte(v), &h.Version); err != nil {
			return h, fmt.Errorf("entry %d: %w", h.ID, err)
		}
		h.At = store.Time(at)
		return h, nil
	}, `SELECT id, skill_uid, user_uid, version, digest, created_at
		FROM skill_history WHERE skill_uid = ? ORDER BY id`, skillUID)
	if err != nil {
		return nil, fmt.Errorf("history of skill %d: %w", skillUID, err)
	}
	return out, nil
}

func (s *Store) historyAdd(ctx context.Context, tx *store.Tx, skillUID, user int64, v Version) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO skill_history (skill_uid, user_uid, version, digest, created_at)
		VALUES (?, ?, ?, ?, ?)`, skillUID, user, string(b), v.Digest(), s.now()); err != nil {
		return fmt.Errorf("history of skill %d: %w", skillUID, err)
	}
	return nil
}
