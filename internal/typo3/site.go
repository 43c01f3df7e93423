package typo3

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Site is one site configuration of a TYPO3 installation,
// config/sites/<Identifier>/config.yaml: the root page of its page tree, its
// base URL and its languages. Keys Waymark does not use (routes, error
// handling, settings of extensions) are ignored.
type Site struct {
	Identifier string // the folder name under config/sites
	File       string // the config.yaml it was read from
	RootPageID int64
	Base       string
	// WebsiteTitle is the site's websiteTitle, the name TYPO3 shows for it
	// (page titles, the backend); "" when the file has none.
	WebsiteTitle string
	Languages    []Language // in the file's order; the default language (ID 0) is among them
}

// Language is a site language. ID is the sys_language_uid of pages and
// content in this language; 0 is the default language.
type Language struct {
	ID      int64
	Title   string
	Locale  string // as written, e.g. "de_DE.UTF-8" or "de-DE"
	Base    string
	Enabled bool // TYPO3 treats a missing "enabled" as true
}

// Code is the language part of the locale in lower case: "de" for
// "de_DE.UTF-8", "en" for "en-US".
func (l Language) Code() string {
	code, _, _ := strings.Cut(l.Locale, ".")
	code, _, _ = strings.Cut(code, "_")
	code, _, _ = strings.Cut(code, "-")
	return strings.ToLower(code)
}

// Language returns the site's language with the given ID.
func (s Site) Language(id int64) (Language, bool) {
	for _, l := range s.Languages {
		if l.ID == id {
			return l, true
		}
	}
	return Language{}, false
}

// siteFile is config.yaml as written; pointers tell missing from zero.
type siteFile struct {
	RootPageID   *int64 `yaml:"rootPageId"`
	Base         string `yaml:"base"`
	WebsiteTitle string `yaml:"websiteTitle"`
	Languages    []struct {
		LanguageID *int64 `yaml:"languageId"`
		Title      string `yaml:"title"`
		Locale     string `yaml:"locale"`
		Base       string `yaml:"base"`
		Enabled    *bool  `yaml:"enabled"`
	} `yaml:"languages"`
	Imports []any `yaml:"imports"`
}

// LoadSites reads every site configuration under dir (an installation's
// config/sites), sorted by identifier. A folder without config.yaml is
// skipped, as TYPO3 does. Any problem is one error naming the file.
func LoadSites(dir string) ([]Site, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("site configurations: %s does not exist", dir)
		}
		return nil, fmt.Errorf("site configurations: %w", err)
	}
	var sites []Site
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		file := filepath.Join(dir, e.Name(), "config.yaml")
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		s, err := LoadSite(file)
		if err != nil {
			return nil, err
		}
		for _, other := range sites {
			if other.RootPageID == s.RootPageID {
				return nil, fmt.Errorf("%s: rootPageId %d is also the root of site %q", file, s.RootPageID, other.Identifier)
			}
		}
		sites = append(sites, s)
	}
	if len(sites) == 0 {
		return nil, fmt.Errorf("site configurations: no <site>/config.yaml under %s", dir)
	}
	return sites, nil
}

// LoadSite reads one config.yaml; the folder it lies in names the site.
func LoadSite(file string) (Site, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Site{}, fmt.Errorf("site configuration: %w", err)
	}
	s, err := parseSite(data)
	if err != nil {
		return Site{}, fmt.Errorf("%s: %s", file, err)
	}
	s.Identifier = filepath.Base(filepath.Dir(file))
	s.File = file
	return s, nil
}

func parseSite(data []byte) (Site, error) {
	var f siteFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return Site{}, errors.New(oneLine(err.Error()))
	}
	if len(f.Imports) > 0 {
		return Site{}, errors.New("imports are not supported; write the languages into config.yaml")
	}
	if f.RootPageID == nil {
		return Site{}, errors.New("rootPageId is missing")
	}
	if *f.RootPageID <= 0 {
		return Site{}, fmt.Errorf("rootPageId is %d, want a page uid above 0", *f.RootPageID)
	}
	s := Site{RootPageID: *f.RootPageID, Base: f.Base, WebsiteTitle: f.WebsiteTitle}
	if len(f.Languages) == 0 {
		return Site{}, errors.New("languages are missing")
	}
	for i, l := range f.Languages {
		n := i + 1
		switch {
		case l.LanguageID == nil:
			return Site{}, fmt.Errorf("language %d: languageId is missing", n)
		case *l.LanguageID < 0:
			return Site{}, fmt.Errorf("language %d: languageId is %d, want 0 or more", n, *l.LanguageID)
		case strings.TrimSpace(l.Locale) == "":
			return Site{}, fmt.Errorf("language %d (languageId %d): locale is missing", n, *l.LanguageID)
		}
		if _, dup := s.Language(*l.LanguageID); dup {
			return Site{}, fmt.Errorf("language %d: languageId %d appears twice", n, *l.LanguageID)
		}
		s.Languages = append(s.Languages, Language{
			ID: *l.LanguageID, Title: l.Title, Locale: l.Locale, Base: l.Base,
			Enabled: l.Enabled == nil || *l.Enabled,
		})
	}
	if !slices.ContainsFunc(s.Languages, func(l Language) bool { return l.ID == 0 }) {
		return Site{}, errors.New("no language with languageId 0 (the default language)")
	}
	return s, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// WriteSite writes s as dir/<s.Identifier>/config.yaml in TYPO3's format.
func WriteSite(dir string, s Site) error {
	if s.Identifier == "" || strings.ContainsAny(s.Identifier, `/\`) || s.Identifier == "." || s.Identifier == ".." {
		return fmt.Errorf("write site: identifier %q is not a folder name", s.Identifier)
	}
	type lang struct {
		Title      string `yaml:"title"`
		Enabled    bool   `yaml:"enabled"`
		Locale     string `yaml:"locale"`
		LanguageID int64  `yaml:"languageId"`
		Base       string `yaml:"base"`
	}
	out := struct {
		RootPageID   int64  `yaml:"rootPageId"`
		Base         string `yaml:"base"`
		WebsiteTitle string `yaml:"websiteTitle,omitempty"`
		Languages    []lang `yaml:"languages"`
	}{RootPageID: s.RootPageID, Base: s.Base, WebsiteTitle: s.WebsiteTitle}
	for _, l := range s.Languages {
		out.Languages = append(out.Languages, lang{l.Title, l.Enabled, l.Locale, l.ID, l.Base})
	}
	data, err := yaml.Marshal(out)
	if err != nil {
		return fmt.Errorf("write site %s: %w", s.Identifier, err)
	}
	folder := filepath.Join(dir, s.Identifier)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return fmt.Errorf("write site %s: %w", s.Identifier, err)
	}
	if err := os.WriteFile(filepath.Join(folder, "config.yaml"), data, 0o644); err != nil {
		return fmt.Errorf("write site %s: %w", s.Identifier, err)
	}
	return nil
}
