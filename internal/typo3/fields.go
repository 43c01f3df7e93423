package typo3

import "strings"

// Column is where a field of Waymark's built-in schema lives in TYPO3.
type Column struct {
	Table  string // the TYPO3 table holding the value
	Column string
	// FileReference is set for a value kept on the record's first file
	// reference (sys_file_reference, tablenames = the record's table,
	// fieldname = FileReference) rather than on the record itself.
	FileReference string
}

// fieldColumns maps Waymark's field names of pages and tt_content (the
// built-in schema of package content) to TYPO3's columns; pages' SEO and
// Open Graph columns are those of the core extension "seo".
var fieldColumns = map[string]map[string]Column{
	"pages": {
		"title":         {Table: "pages", Column: "title"},
		"navTitle":      {Table: "pages", Column: "nav_title"},
		"slug":          {Table: "pages", Column: "slug"},
		"seoTitle":      {Table: "pages", Column: "seo_title"},
		"description":   {Table: "pages", Column: "description"},
		"keywords":      {Table: "pages", Column: "keywords"},
		"ogTitle":       {Table: "pages", Column: "og_title"},
		"ogDescription": {Table: "pages", Column: "og_description"},
		"ogImage":       {Table: "pages", Column: "og_image"},
		"abstract":      {Table: "pages", Column: "abstract"},
	},
	"tt_content": {
		"CType":     {Table: "tt_content", Column: "CType"},
		"header":    {Table: "tt_content", Column: "header"},
		"subheader": {Table: "tt_content", Column: "subheader"},
		"bodytext":  {Table: "tt_content", Column: "bodytext"},
		"colPos":    {Table: "tt_content", Column: "colPos"},
		"image":     {Table: "tt_content", Column: "image"},
		"imageAlt":  {Table: "sys_file_reference", Column: "alternative", FileReference: "image"},
	},
}

// FieldColumn returns the TYPO3 column of a Waymark field of pages or
// tt_content, and false for a field it does not know.
func FieldColumn(table, field string) (Column, bool) {
	c, ok := fieldColumns[table][field]
	return c, ok
}

// WaymarkField turns TYPO3's "table:column" of a non-exclude field right
// (be_groups.non_exclude_fields) into Waymark's "table:field"; false for a
// column no Waymark field lives in.
func WaymarkField(tableColumn string) (string, bool) {
	t, c, ok := strings.Cut(tableColumn, ":")
	if !ok {
		return "", false
	}
	for table, fields := range fieldColumns {
		for name, col := range fields {
			if col.Table == t && col.Column == c {
				return table + ":" + name, true
			}
		}
	}
	return "", false
}
