package typo3

import (
	"strings"
	"testing"

	"waymark/internal/typo3/tca"
)

// The TCA table of package tca names, for every field, the column
// FieldColumn maps it to, and a max no larger than the VARCHAR the schema
// gives that column (TYPO3 derives the column from the TCA max).
func TestTheTCALimitsNameTheColumnsAndFitTheirVarchars(t *testing.T) {
	sizes := map[string]int{}
	for _, tb := range schema() {
		for _, c := range tb.columns {
			if c.typ == tVarchar {
				sizes[tb.name+"."+c.name] = c.size
			}
		}
	}
	for table, fields := range tca.Fields() {
		for name, f := range fields {
			col, ok := FieldColumn(table, name)
			if !ok || col.Table != f.Table || col.Column != f.Column {
				t.Errorf("tca %s.%s names %s.%s, FieldColumn %+v", table, name, f.Table, f.Column, col)
			}
			if size, varchar := sizes[f.Table+"."+f.Column]; varchar && (f.Max == 0 || f.Max > size) {
				t.Errorf("tca %s.%s: max %d, column VARCHAR(%d)", table, name, f.Max, size)
			}
		}
	}
	if _, err := tca.Apply("pages", "seoTitle", strings.Repeat("ä", 256)); err == nil {
		t.Error("Apply(pages.seoTitle, 256 characters) = nil, want the TCA max refused")
	}
	if v, err := tca.Apply("pages", "seoTitle", " \tÄbout\u00a0\n"); err != nil || v != "Äbout\u00a0" {
		t.Errorf("Apply(pages.seoTitle) = %q, %v; want PHP's trim", v, err)
	}
	if v, _ := tca.Apply("tt_content", "header", " About "); v != " About " {
		t.Errorf("Apply(tt_content.header) = %q, want it untrimmed (no eval trim)", v)
	}
}
