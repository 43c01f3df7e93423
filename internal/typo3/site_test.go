package typo3

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A site configuration as TYPO3 13's site module writes it, with keys Waymark
// does not read.
const nordlichtYAML = `base: 'https://nordlicht.example/'
rootPageId: 1
websiteTitle: 'Nordlicht Digital'
dependencies:
  - typo3/fluid-styled-content
errorHandling:
  - errorCode: 404
    errorHandler: Page
    errorContentSource: 't3://page?uid=8'
languages:
  - title: English
    enabled: true
    locale: en_US.UTF-8
    base: /
    navigationTitle: English
    flag: gb
    languageId: 0
  - title: Deutsch
    enabled: true
    locale: de_DE.UTF-8
    base: /de/
    fallbackType: strict
    fallbacks: ''
    flag: de
    languageId: 1
  - title: Dansk
    enabled: false
    locale: da-DK
    base: /da/
    languageId: 2
routeEnhancers:
  PageTypeSuffix:
    type: PageType
`

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadSitesReadsRootPageBaseAndLanguages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "nordlicht", "config.yaml"), nordlichtYAML)
	writeFile(t, filepath.Join(dir, "intranet", "config.yaml"), "rootPageId: 20\nbase: /intranet/\nlanguages:\n  - {languageId: 0, title: English, locale: en_GB.UTF-8, base: /}\n")
	if err := os.MkdirAll(filepath.Join(dir, "half-made"), 0o755); err != nil {
		t.Fatal(err)
	}
	sites, err := LoadSites(dir)
	if err != nil {
		t.Fatalf("LoadSites = %v", err)
	}
	want := []Site{
		{Identifier: "intranet", File: filepath.Join(dir, "intranet", "config.yaml"), RootPageID: 20, Base: "/intranet/",
			Languages: []Language{{ID: 0, Title: "English", Locale: "en_GB.UTF-8", Base: "/", Enabled: true}}},
		{Identifier: "nordlicht", File: filepath.Join(dir, "nordlicht", "config.yaml"), RootPageID: 1, Base: "https://nordlicht.example/",
			WebsiteTitle: "Nordlicht Digital", Languages: []Language{
				{ID: 0, Title: "English", Locale: "en_US.UTF-8", Base: "/", Enabled: true},
				{ID: 1, Title: "Deutsch", Locale: "de_DE.UTF-8", Base: "/de/", Enabled: true},
				{ID: 2, Title: "Dansk", Locale: "da-DK", Base: "/da/", Enabled: false},
			}},
	}
	if !reflect.DeepEqual(sites, want) {
		t.Errorf("LoadSites =\n%+v\nwant\n%+v", sites, want)
	}
	var codes []string
	for _, l := range sites[1].Languages {
		codes = append(codes, l.Code())
	}
	if got := strings.Join(codes, ","); got != "en,de,da" {
		t.Errorf("language codes = %s, want en,de,da", got)
	}
}

func TestLoadSitesRefusesBadInputWithOneLineNamingFileAndFault(t *testing.T) {
	t.Parallel()
	lang0 := "languages:\n  - {languageId: 0, title: English, locale: en_US.UTF-8}\n"
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"malformed YAML", "rootPageId: 1\nlanguages: [\n  - {languageId: 0\n", "yaml"},
		{"rootPageId missing", "base: /\n" + lang0, "rootPageId is missing"},
		{"rootPageId zero", "rootPageId: 0\n" + lang0, "rootPageId is 0"},
		{"rootPageId not a number", "rootPageId: home\n" + lang0, "line 1: cannot unmarshal !!str `home`"},
		{"languages missing", "rootPageId: 1\n", "languages are missing"},
		{"languageId missing", "rootPageId: 1\nlanguages:\n  - {title: English, locale: en_US}\n", "language 1: languageId is missing"},
		{"locale missing", "rootPageId: 1\nlanguages:\n  - {languageId: 0, title: English}\n", "locale is missing"},
		{"duplicate languageId", "rootPageId: 1\nlanguages:\n  - {languageId: 0, locale: en_US}\n  - {languageId: 1, locale: de_DE}\n  - {languageId: 1, locale: da_DK}\n", "language 3: languageId 1 appears twice"},
		{"no default language", "rootPageId: 1\nlanguages:\n  - {languageId: 1, locale: de_DE}\n", "languageId 0"},
		{"imports", "imports:\n  - {resource: 'EXT:site/languages.yaml'}\nrootPageId: 1\n" + lang0, "imports are not supported"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "main", "config.yaml")
		writeFile(t, file, c.yaml)
		_, err := LoadSites(dir)
		if err == nil {
			t.Errorf("%s: LoadSites succeeded", c.name)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, file+": ") || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line starting with %s and naming %q", c.name, msg, file, c.want)
		}
	}
}

func TestLoadSitesRefusesAMissingFolderAndAnEmptyOne(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "config", "sites")
	if _, err := LoadSites(missing); err == nil || err.Error() != "site configurations: "+missing+" does not exist" {
		t.Errorf("LoadSites(missing) = %v", err)
	}
	empty := t.TempDir()
	if _, err := LoadSites(empty); err == nil || !strings.Contains(err.Error(), "no <site>/config.yaml under "+empty) {
		t.Errorf("LoadSites(empty) = %v", err)
	}
}

func TestLoadSitesRefusesTwoSitesOnOneRootPage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := "rootPageId: 1\nlanguages:\n  - {languageId: 0, locale: en_US}\n"
	writeFile(t, filepath.Join(dir, "a", "config.yaml"), one)
	writeFile(t, filepath.Join(dir, "b", "config.yaml"), one)
	_, err := LoadSites(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "b", "config.yaml")+`: rootPageId 1 is also the root of site "a"`) {
		t.Errorf("LoadSites = %v", err)
	}
}

func TestWriteSiteWritesWhatLoadSitesReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := Site{Identifier: "nordlicht", RootPageID: 1, Base: "http://localhost/", Languages: []Language{
		{ID: 0, Title: "English", Locale: "en_US.UTF-8", Base: "/", Enabled: true},
		{ID: 1, Title: "Deutsch", Locale: "de_DE.UTF-8", Base: "/de/", Enabled: true},
	}}
	if err := WriteSite(dir, s); err != nil {
		t.Fatal(err)
	}
	got, err := LoadSites(dir)
	s.File = filepath.Join(dir, "nordlicht", "config.yaml")
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], s) {
		t.Errorf("LoadSites after WriteSite = %+v, %v, want %+v", got, err, s)
	}
	if err := WriteSite(dir, Site{Identifier: "../x"}); err == nil {
		t.Error("WriteSite(../x) succeeded")
	}
}
