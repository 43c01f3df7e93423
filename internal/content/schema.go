package content

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"waymark/internal/store"
)

// Labels maps a backend language ("en", "de") to a text.
type Labels map[string]string

// In returns the label in lang, falling back to English, then to any label, then to fallback.
func (l Labels) In(lang, fallback string) string {
	if s := l[lang]; s != "" {
		return s
	}
	if s := l["en"]; s != "" {
		return s
	}
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if l[k] != "" {
			return l[k]
		}
	}
	return fallback
}

// Range is the recommended length of a field's value, in characters.
type Range struct {
	Min int `json:"min" yaml:"min"`
	Max int `json:"max" yaml:"max"`
}

// Field describes one field of a table.
type Field struct {
	Name    string `json:"name" yaml:"name"`
	Label   Labels `json:"label,omitempty" yaml:"label,omitempty"`
	Exclude bool   `json:"exclude,omitempty" yaml:"exclude,omitempty"` // editable by non-admins only with a nonExcludeFields grant
	Range   *Range `json:"range,omitempty" yaml:"range,omitempty"`
}

// Table describes one table: its labels, its language field and its fields.
type Table struct {
	Name          string  `json:"name" yaml:"name"`
	Label         Labels  `json:"label,omitempty" yaml:"label,omitempty"`
	LanguageField string  `json:"languageField,omitempty" yaml:"languageField,omitempty"`
	Fields        []Field `json:"fields,omitempty" yaml:"fields,omitempty"`
}

// Field returns the named field.
func (t *Table) Field(name string) (Field, bool) {
	for _, f := range t.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// FieldLabel returns the field's label in lang, or its name.
func (t *Table) FieldLabel(name, lang string) string {
	if f, ok := t.Field(name); ok {
		return f.Label.In(lang, name)
	}
	return name
}

// merge lays ext over t: labels and ranges of ext win, new fields are appended,
// and a field excluded by either stays excluded.
func (t Table) merge(ext Table) Table {
	out := t
	out.Label = Labels{}
	for k, v := range t.Label {
		out.Label[k] = v
	}
	for k, v := range ext.Label {
		out.Label[k] = v
	}
	if ext.LanguageField != "" {
		out.LanguageField = ext.LanguageField
	}
	out.Fields = append([]Field(nil), t.Fields...)
	for _, ef := range ext.Fields {
		replaced := false
		for i, f := range out.Fields {
			if f.Name == ef.Name {
				merged := f
				if merged.Label == nil {
					merged.Label = Labels{}
				} else {
					merged.Label = Labels{}
					for k, v := range f.Label {
						merged.Label[k] = v
					}
				}
				for k, v := range ef.Label {
					merged.Label[k] = v
				}
				// An extension may exclude a field but never lift an
				// exclusion: a label-only extension must not make an
				// excluded field editable by every editor.
				merged.Exclude = f.Exclude || ef.Exclude
				if ef.Range != nil {
					merged.Range = ef.Range
				}
				out.Fields[i] = merged
				replaced = true
				break
			}
		}
		if !replaced {
			out.Fields = append(out.Fields, ef)
		}
	}
	return out
}

// Schemas is the set of known tables: the built-ins merged with stored extensions.
type Schemas struct {
	tables map[string]*Table
}

// Table returns the schema of a table.
func (s *Schemas) Table(name string) (*Table, bool) {
	t, ok := s.tables[name]
	return t, ok
}

// Names lists the known tables, sorted.
func (s *Schemas) Names() []string {
	out := make([]string, 0, len(s.tables))
	for n := range s.tables {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// BuiltinSchemas returns the built-in schemas only (one shared value: do not modify it).
func BuiltinSchemas() *Schemas { return builtinSchemas() }

var builtinSchemas = sync.OnceValue(func() *Schemas {
	s := &Schemas{tables: map[string]*Table{}}
	for _, t := range builtinTables() {
		t := t
		s.tables[t.Name] = &t
	}
	return s
})

// WithExtension returns a copy of s with ext merged over its table (or added).
func (s *Schemas) WithExtension(ext Table) *Schemas {
	out := &Schemas{tables: make(map[string]*Table, len(s.tables)+1)}
	for k, v := range s.tables {
		out.tables[k] = v
	}
	base, ok := s.tables[ext.Name]
	var merged Table
	if ok {
		merged = base.merge(ext)
	} else {
		merged = Table{Name: ext.Name, LanguageField: "language"}.merge(ext)
	}
	out.tables[ext.Name] = &merged
	return out
}

// LoadSchemas reads the stored extensions and merges them over the built-ins.
// The result is kept for one settings generation (store.GenCache), which
// every change of schema_tables moves.
func LoadSchemas(ctx context.Context, q store.Querier) (*Schemas, error) {
	return schemaCache.Get(ctx, q, struct{}{}, loadSchemas)
}

var schemaCache = store.NewGenCache[struct{}, *Schemas]("schema_tables")

func loadSchemas(ctx context.Context, q store.Querier) (*Schemas, error) {
	exts, err := StoredExtensions(ctx, q)
	if err != nil {
		return nil, err
	}
	s := BuiltinSchemas()
	for _, ext := range exts {
		s = s.WithExtension(ext)
	}
	return s, nil
}

// StoredExtensions reads the stored table extensions, by name, as stored now
// (not cached) — for the importer, which merges them with its files'.
func StoredExtensions(ctx context.Context, q store.Querier) ([]Table, error) {
	rows, err := q.Query(ctx, "SELECT name, definition FROM schema_tables ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("load schemas: %w", err)
	}
	defer rows.Close()
	var out []Table
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return nil, fmt.Errorf("load schemas: %w", err)
		}
		var ext Table
		if err := json.Unmarshal([]byte(def), &ext); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		ext.Name = name
		out = append(out, ext)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load schemas: %w", err)
	}
	return out, nil
}

// SaveExtensionTx stores (replaces) a table extension.
func SaveExtensionTx(ctx context.Context, q store.Querier, ext Table) error {
	b, err := json.Marshal(ext)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `INSERT INTO schema_tables (name, definition) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET definition = excluded.definition`, ext.Name, string(b))
	return err
}

func builtinTables() []Table {
	return []Table{
		{
			Name:          "pages",
			Label:         Labels{"en": "Page", "de": "Seite"},
			LanguageField: "language",
			Fields: []Field{
				{Name: "title", Label: Labels{"en": "Page title", "de": "Seitentitel"}},
				{Name: "navTitle", Label: Labels{"en": "Navigation title", "de": "Navigationstitel"}},
				{Name: "slug", Label: Labels{"en": "URL segment", "de": "URL-Segment"}, Exclude: true},
				{Name: "seoTitle", Label: Labels{"en": "SEO title", "de": "SEO-Titel"}, Exclude: true, Range: &Range{Min: 30, Max: 60}},
				{Name: "description", Label: Labels{"en": "Description", "de": "Beschreibung"}, Exclude: true, Range: &Range{Min: 140, Max: 160}},
				{Name: "keywords", Label: Labels{"en": "Keywords", "de": "Stichworte"}, Exclude: true},
				{Name: "ogTitle", Label: Labels{"en": "Open Graph title", "de": "Open-Graph-Titel"}, Exclude: true, Range: &Range{Min: 30, Max: 60}},
				{Name: "ogDescription", Label: Labels{"en": "Open Graph description", "de": "Open-Graph-Beschreibung"}, Exclude: true, Range: &Range{Min: 60, Max: 200}},
				{Name: "ogImage", Label: Labels{"en": "Open Graph image", "de": "Open-Graph-Bild"}, Exclude: true},
				{Name: "abstract", Label: Labels{"en": "Abstract", "de": "Kurzfassung"}},
			},
		},
		{
			Name:          "tt_content",
			Label:         Labels{"en": "Content element", "de": "Inhaltselement"},
			LanguageField: "language",
			Fields: []Field{
				{Name: "CType", Label: Labels{"en": "Type", "de": "Typ"}},
				{Name: "header", Label: Labels{"en": "Header", "de": "Überschrift"}, Range: &Range{Min: 10, Max: 70}},
				{Name: "subheader", Label: Labels{"en": "Subheader", "de": "Unterüberschrift"}},
				{Name: "bodytext", Label: Labels{"en": "Text", "de": "Text"}},
				{Name: "image", Label: Labels{"en": "Images", "de": "Bilder"}},
				{Name: "imageAlt", Label: Labels{"en": "Alternative text", "de": "Alternativtext"}, Range: &Range{Min: 5, Max: 125}},
				{Name: "colPos", Label: Labels{"en": "Column", "de": "Spalte"}, Exclude: true},
			},
		},
	}
}
