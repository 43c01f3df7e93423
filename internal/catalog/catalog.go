// Package catalog holds the texts of the editor's UI, one message catalogue
// per language: English is the source, German the informal "du" with the
// labels of the reference (Übernehmen, Andere Variante, Überspringen …).
// The web UI and GET /api/labels read them; a test fails when a key is
// missing in either language. .
package catalog

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// The catalogue of a language is every file named LANG.json or
// PART.LANG.json (admin.en.json …), merged; a key in two files of one
// language is a start-up error, so screens can own their files.
//
//go:embed *.json
var files embed.FS

// Languages are the catalogue languages; the first is the source and the fallback.
var Languages = []string{"en", "de"}

var catalogues = func() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, l := range Languages {
		out[l] = map[string]string{}
	}
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		name := e.Name()
		base := strings.TrimSuffix(name, ".json")
		l := base[strings.LastIndexByte(base, '.')+1:]
		into, ok := out[l]
		if !ok {
			panic(fmt.Sprintf("catalog %s: %q is not a catalogue language", name, l))
		}
		raw, err := files.ReadFile(name)
		if err != nil {
			panic(err)
		}
		m := map[string]string{}
		if err := json.Unmarshal(raw, &m); err != nil {
			panic(fmt.Sprintf("catalog %s: %v", name, err))
		}
		for k, v := range m {
			if _, dup := into[k]; dup {
				panic(fmt.Sprintf("catalog %s: key %q is already defined in another file of %s", name, k, l))
			}
			into[k] = v
		}
	}
	return out
}()

// Lang returns the catalogue language of a backend language ("de", "de-DE"
// → "de"); anything else is English.
func Lang(backend string) string {
	b, _, _ := strings.Cut(strings.ToLower(backend), "-")
	b, _, _ = strings.Cut(b, "_")
	if _, ok := catalogues[b]; ok {
		return b
	}
	return Languages[0]
}

// T looks texts up in one language.
type T struct{ lang string }

// For returns the texts of a backend language.
func For(backend string) T { return T{lang: Lang(backend)} }

// Lang is the catalogue language ("en", "de").
func (t T) Lang() string { return cmpOr(t.lang, Languages[0]) }

// Get returns the text of key, formatted with args (fmt verbs) when given.
// A key that is missing everywhere is returned in brackets, so a test can see it.
func (t T) Get(key string, args ...any) string {
	s, ok := catalogues[t.Lang()][key]
	if !ok {
		if s, ok = catalogues[Languages[0]][key]; !ok {
			return "[" + key + "]"
		}
	}
	if len(args) > 0 && strings.Contains(s, "%") {
		return fmt.Sprintf(s, args...)
	}
	return s
}

// Has reports whether key exists in the source catalogue.
func Has(key string) bool { _, ok := catalogues[Languages[0]][key]; return ok }

// All returns every text of a language (GET /api/labels).
func (t T) All() map[string]string {
	out := map[string]string{}
	for k, v := range catalogues[t.Lang()] {
		out[k] = v
	}
	return out
}

// Keys lists the keys of language lang, sorted.
func Keys(lang string) []string {
	var out []string
	for k := range catalogues[lang] {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
