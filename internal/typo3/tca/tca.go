// Package tca holds what TYPO3's TCA says about the values of the fields
// Waymark writes — the limits and evaluations DataHandler applies — as a
// table every source shares: Waymark's built-in schema mirrors TYPO3's
// fields, and a proposal is checked against them before a card is shown, so
// the model gets a reason back instead of a write that TYPO3 would cut or
// the database refuse. It has no dependencies, so the tools can use it.
package tca

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Field is what the TCA of one column says about its values.
type Field struct {
	Table, Column string // the TYPO3 column (see typo3.FieldColumn)
	// Max is the column's TCA 'max' in characters (DataHandler cuts longer
	// values, and the VARCHAR column holds no more); 0: none.
	Max int
	// Trim is eval 'trim': DataHandler trims surrounding white space.
	Trim bool
}

// fields are the TCA of TYPO3 13.4 for the fields of Waymark's schema, by
// Waymark's table and field name: EXT:core Configuration/TCA/pages.php
// (title, nav_title: max 255, eval trim; keywords, description, abstract:
// type text without max), EXT:seo Configuration/TCA/Overrides/pages.php
// (seo_title, og_title: max 255, eval trim; og_description: type text),
// EXT:frontend Configuration/TCA/tt_content.php (header, subheader: max 255,
// no eval; bodytext: type text) and EXT:core
// Configuration/TCA/sys_file_reference.php (alternative: type input without
// max, a text column).
var fields = map[string]map[string]Field{
	"pages": {
		"title":         {Table: "pages", Column: "title", Max: 255, Trim: true},
		"navTitle":      {Table: "pages", Column: "nav_title", Max: 255, Trim: true},
		"seoTitle":      {Table: "pages", Column: "seo_title", Max: 255, Trim: true},
		"ogTitle":       {Table: "pages", Column: "og_title", Max: 255, Trim: true},
		"description":   {Table: "pages", Column: "description"},
		"keywords":      {Table: "pages", Column: "keywords"},
		"abstract":      {Table: "pages", Column: "abstract"},
		"ogDescription": {Table: "pages", Column: "og_description"},
	},
	"tt_content": {
		"header":    {Table: "tt_content", Column: "header", Max: 255},
		"subheader": {Table: "tt_content", Column: "subheader", Max: 255},
		"bodytext":  {Table: "tt_content", Column: "bodytext"},
		"imageAlt":  {Table: "sys_file_reference", Column: "alternative"},
	},
}

// Lookup returns the TCA of Waymark's table and field, false for a field
// the table does not know.
func Lookup(table, field string) (Field, bool) {
	f, ok := fields[table][field]
	return f, ok
}

// Fields lists every field of the table, by Waymark's table and field name.
func Fields() map[string]map[string]Field {
	out := make(map[string]map[string]Field, len(fields))
	for t, fs := range fields {
		out[t] = make(map[string]Field, len(fs))
		for n, f := range fs {
			out[t][n] = f
		}
	}
	return out
}

// TooLongError refuses a value longer than its field's TCA max.
type TooLongError struct {
	Table, Field string // Waymark's names
	Column       string // TYPO3's table.column
	Length, Max  int    // in characters
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("%s.%s is %d characters long; TYPO3 allows at most %d (TCA max of %s): propose a shorter value",
		e.Table, e.Field, e.Length, e.Max, e.Column)
}

// phpTrim are the characters PHP's trim() removes, which eval trim uses.
const phpTrim = " \t\n\r\x00\x0B"

// Apply evaluates value as DataHandler would for Waymark's table and field:
// trimmed where the TCA says eval trim, then refused with a *TooLongError
// when it is longer than the TCA max (DataHandler would cut it silently).
// A field the table does not know passes unchanged.
func Apply(table, field, value string) (string, error) {
	f, ok := Lookup(table, field)
	if !ok {
		return value, nil
	}
	if f.Trim {
		value = strings.Trim(value, phpTrim)
	}
	if n := utf8.RuneCountInString(value); f.Max > 0 && n > f.Max {
		return value, &TooLongError{Table: table, Field: field, Column: f.Table + "." + f.Column, Length: n, Max: f.Max}
	}
	return value, nil
}
