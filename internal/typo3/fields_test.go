package typo3

import "testing"

// TYPO3's non-exclude rights name columns; Waymark's name fields. Every
// field with a column maps back to itself, an image's alternative text to
// tt_content:imageAlt, and a column no field lives in to nothing.
func TestWaymarkFieldIsFieldColumnBackwards(t *testing.T) {
	for table, fields := range fieldColumns {
		for name, col := range fields {
			got, ok := WaymarkField(col.Table + ":" + col.Column)
			if !ok || got != table+":"+name {
				t.Errorf("WaymarkField(%s:%s) = %q %v, want %s:%s", col.Table, col.Column, got, ok, table, name)
			}
		}
	}
	for _, bad := range []string{"pages:tx_news_teaser", "pages", "", "be_users:password"} {
		if got, ok := WaymarkField(bad); ok {
			t.Errorf("WaymarkField(%q) = %q, want none", bad, got)
		}
	}
}
