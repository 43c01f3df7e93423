package skill

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// slug is the form of every skill identifier: it names a
// folder of a directory source, so never "..", a quote or a space.
var slug = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// validIdentifier refuses an identifier that is not a slug of 1 to 200 characters.
func validIdentifier(id string) error {
	if len(id) == 0 || len(id) > 200 {
		return invalid("identifier", "want 1 to 200 characters, got %d", len(id))
	}
	if !slug.MatchString(id) {
		return invalid("identifier", "%q is not a slug: want [a-z0-9][a-z0-9-]*", id)
	}
	return nil
}

// rootOf makes the configured skills root absolute, and real with its
// symlinks resolved, so that Sync's containment checks compare real paths.
func rootOf(root string) (abs, real string, err error) {
	if root == "" {
		return "", "", nil
	}
	if abs, err = filepath.Abs(root); err != nil {
		return "", "", fmt.Errorf("skills root: %w", err)
	}
	if real, err = filepath.EvalSymlinks(abs); err != nil {
		return "", "", fmt.Errorf("skills root %s: %w", abs, err)
	}
	return abs, real, nil
}

// within reports whether path lies in (or is) dir; both clean and absolute.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// sourceDir returns the folder of a directory source's path as written:
// relative to the skills root, or absolute inside it. It checks the path as
// written (no ".." out of the root); Sync checks it again with symlinks
// resolved. Errors name the path as given, never the root.
func (s *Store) sourceDir(path string) (string, error) {
	if s.root == "" {
		return "", invalid("path", "directory sources need a skills root (--skills-root or WAYMARK_SKILLS_ROOT); none is configured")
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.root, p)
	}
	p = filepath.Clean(p)
	if !within(s.root, p) && !within(s.rootAbs, p) {
		return "", invalid("path", "source folder %q must lie inside the skills root", path)
	}
	return p, nil
}

// rel names path relative to the skills root for messages.
func (s *Store) rel(path string) string {
	for _, root := range []string{s.root, s.rootAbs} {
		if r, err := filepath.Rel(root, path); err == nil && within(root, path) {
			return r
		}
	}
	return filepath.Base(path)
}

// realSourceDir resolves the symlinks of a source folder and refuses one
// that then lies outside the skills root.
func (s *Store) realSourceDir(path string) (string, error) {
	dir, err := s.sourceDir(path)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("%w: %s does not exist", ErrSourceUnreadable, s.rel(dir))
		}
		return "", fmt.Errorf("%w: %s: cannot resolve", ErrSourceUnreadable, s.rel(dir))
	}
	if !within(s.root, real) {
		return "", &outsideRootError{invalid("path", "source folder %q leads out of the skills root through a symlink: it must lie inside the skills root", s.rel(dir))}
	}
	return real, nil
}

// outsideRootError marks a sync refused because its folder left the root.
type outsideRootError struct{ error }

func (e *outsideRootError) Unwrap() error { return e.error }

// symlinkError marks a sync refused because a SKILL.md left its folder.
type symlinkError struct{ error }

func (e *symlinkError) Unwrap() error { return e.error }
