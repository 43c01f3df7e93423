package content_test

import (
	"context"
	"reflect"
	"testing"

	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestLabelsInFallsBackToEnglishThenAnyThenFallback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		labels content.Labels
		lang   string
		want   string
	}{
		{"own language", content.Labels{"en": "Page", "de": "Seite"}, "de", "Seite"},
		{"english when missing", content.Labels{"en": "Page", "de": "Seite"}, "fr", "Page"},
		{"english when empty", content.Labels{"en": "Page", "de": ""}, "de", "Page"},
		{"first sorted language without english", content.Labels{"fr": "Page (fr)", "de": "Seite"}, "it", "Seite"},
		{"empty texts are skipped", content.Labels{"de": "", "fr": "Page (fr)"}, "it", "Page (fr)"},
		{"fallback when no text", content.Labels{"de": ""}, "de", "fallback"},
		{"fallback for nil labels", nil, "en", "fallback"},
	}
	for _, tt := range tests {
		if got := tt.labels.In(tt.lang, "fallback"); got != tt.want {
			t.Errorf("%s: %v.In(%q) = %q, want %q", tt.name, tt.labels, tt.lang, got, tt.want)
		}
	}
}

func TestBuiltinFieldLabelsPerLanguage(t *testing.T) {
	t.Parallel()
	s := content.BuiltinSchemas()
	if got, want := s.Names(), []string{"pages", "tt_content"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	pages, _ := s.Table("pages")
	tests := []struct{ field, lang, want string }{
		{"description", "de", "Beschreibung"},
		{"description", "en", "Description"},
		{"description", "fr", "Description"},
		{"nosuch", "de", "nosuch"},
	}
	for _, tt := range tests {
		if got := pages.FieldLabel(tt.field, tt.lang); got != tt.want {
			t.Errorf("FieldLabel(%s, %s) = %q, want %q", tt.field, tt.lang, got, tt.want)
		}
	}
	if got := pages.Label.In("de", "pages"); got != "Seite" {
		t.Errorf("pages label in de = %q, want Seite", got)
	}
}

func TestWithExtensionMergesOverBuiltins(t *testing.T) {
	t.Parallel()
	base := content.BuiltinSchemas()
	ext := content.Table{
		Name:  "pages",
		Label: content.Labels{"fr": "Page (fr)"},
		Fields: []content.Field{
			{Name: "title", Label: content.Labels{"fr": "Titre", "de": "Titel"}},
			{Name: "abstract", Exclude: true, Range: &content.Range{Min: 1, Max: 2}},
			{Name: "teaser", Label: content.Labels{"en": "Teaser"}},
		},
	}
	s := base.WithExtension(ext).WithExtension(content.Table{Name: "tx_news", Fields: []content.Field{{Name: "headline"}}})

	pages, _ := s.Table("pages")
	if got := pages.Label; !reflect.DeepEqual(got, content.Labels{"en": "Page", "de": "Seite", "fr": "Page (fr)"}) {
		t.Errorf("pages label = %v, want en/de kept and fr added", got)
	}
	title, _ := pages.Field("title")
	if want := (content.Labels{"en": "Page title", "de": "Titel", "fr": "Titre"}); !reflect.DeepEqual(title.Label, want) {
		t.Errorf("title label = %v, want %v", title.Label, want)
	}
	abstract, _ := pages.Field("abstract")
	if !abstract.Exclude || abstract.Range == nil || *abstract.Range != (content.Range{Min: 1, Max: 2}) {
		t.Errorf("abstract = %+v, want excluded with range 1..2", abstract)
	}
	if abstract.Label.In("de", "") != "Kurzfassung" {
		t.Errorf("abstract label = %v, want built-in labels kept", abstract.Label)
	}
	if last := pages.Fields[len(pages.Fields)-1]; last.Name != "teaser" {
		t.Errorf("last field = %s, want new field teaser appended", last.Name)
	}
	news, ok := s.Table("tx_news")
	if !ok || news.LanguageField != "language" {
		t.Fatalf("tx_news = %+v, %v; want a new table with language field \"language\"", news, ok)
	}
	if _, ok := news.Field("headline"); !ok {
		t.Error("tx_news has no field headline")
	}

	// The base stays as it was.
	basePages, _ := base.Table("pages")
	if _, ok := basePages.Field("teaser"); ok {
		t.Error("WithExtension changed the base schemas")
	}
	if bt, _ := basePages.Field("title"); bt.Label["fr"] != "" {
		t.Error("WithExtension changed a base label")
	}
	if _, ok := base.Table("tx_news"); ok {
		t.Error("WithExtension added a table to the base schemas")
	}
}

// TestExtensionRelabellingAFieldKeepsItExcluded is the regression test for
// an extension that only adds a label to an excluded built-in field
// (pages.description) making it editable by every editor: an extension may
// exclude a field, never lift the exclusion.
func TestExtensionRelabellingAFieldKeepsItExcluded(t *testing.T) {
	t.Parallel()
	s := content.BuiltinSchemas().WithExtension(content.Table{
		Name:   "pages",
		Fields: []content.Field{{Name: "description", Label: content.Labels{"fr": "Description (fr)"}}},
	})
	pages, _ := s.Table("pages")
	f, _ := pages.Field("description")
	if !f.Exclude {
		t.Error("pages.description lost its exclude flag through a label-only extension")
	}
	if f.Label.In("fr", "") != "Description (fr)" || f.Label.In("de", "") != "Beschreibung" {
		t.Errorf("description labels = %v, want fr added and de kept", f.Label)
	}
}

func TestSaveExtensionTxIsLoadedAndReplaced(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		first := content.Table{Name: "pages", Fields: []content.Field{
			{Name: "teaser", Label: content.Labels{"en": "Teaser", "de": "Anreißer"}, Range: &content.Range{Min: 10, Max: 20}},
		}}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return content.SaveExtensionTx(ctx, tx, first) }); err != nil {
			t.Fatalf("SaveExtensionTx: %v", err)
		}
		if err := content.SaveExtensionTx(ctx, db, content.Table{Name: "tx_news", Label: content.Labels{"en": "News"}}); err != nil {
			t.Fatalf("SaveExtensionTx: %v", err)
		}
		s, err := content.LoadSchemas(ctx, db)
		if err != nil {
			t.Fatalf("LoadSchemas: %v", err)
		}
		if got, want := s.Names(), []string{"pages", "tt_content", "tx_news"}; !reflect.DeepEqual(got, want) {
			t.Errorf("Names() = %v, want %v", got, want)
		}
		pages, _ := s.Table("pages")
		if got := pages.FieldLabel("teaser", "de"); got != "Anreißer" {
			t.Errorf("teaser label in de = %q, want Anreißer", got)
		}
		if teaser, _ := pages.Field("teaser"); teaser.Range == nil || teaser.Range.Max != 20 {
			t.Errorf("teaser = %+v, want range up to 20", teaser)
		}
		if got := pages.FieldLabel("title", "de"); got != "Seitentitel" {
			t.Errorf("title label in de = %q, want the built-in Seitentitel", got)
		}

		// Saving again replaces the extension rather than adding to it.
		second := content.Table{Name: "pages", Fields: []content.Field{{Name: "subtitle"}}}
		if err := content.SaveExtensionTx(ctx, db, second); err != nil {
			t.Fatalf("SaveExtensionTx again: %v", err)
		}
		var n int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM schema_tables WHERE name = 'pages'").Scan(&n); err != nil || n != 1 {
			t.Fatalf("schema_tables rows for pages = %d, %v; want 1", n, err)
		}
		s, err = content.LoadSchemas(ctx, db)
		if err != nil {
			t.Fatalf("LoadSchemas: %v", err)
		}
		pages, _ = s.Table("pages")
		if _, ok := pages.Field("teaser"); ok {
			t.Error("teaser survived the replacement of the pages extension")
		}
		if _, ok := pages.Field("subtitle"); !ok {
			t.Error("subtitle missing after the replacement")
		}
	})
}

func TestLoadSchemasRejectsBrokenExtension(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.Exec(ctx, "INSERT INTO schema_tables (name, definition) VALUES ('pages', 'not json')"); err != nil {
			t.Fatal(err)
		}
		if _, err := content.LoadSchemas(ctx, db); err == nil {
			t.Error("LoadSchemas with a broken extension = nil error, want one naming the table")
		}
	})
}
