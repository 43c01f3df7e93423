package demo

import (
	"strings"
	"testing"
)

// The closing summary counts in the singular for one point ("1 Punkt", not
// "1 Punkte") and in the plural otherwise, in both languages.
func TestTourSummaryCountsOnePointInTheSingular(t *testing.T) {
	for _, c := range []struct {
		german bool
		n      int
		want   string
	}{
		{true, 1, "ist fertig: 1 Punkt."}, {true, 2, "ist fertig: 2 Punkte."},
		{false, 1, "is done: 1 point."}, {false, 2, "is done: 2 points."},
	} {
		tr := &tour{german: c.german, read: &pageRead{Page: record{Fields: map[string]string{"title": "Über uns"}}}}
		var all []finding
		for i := range c.n {
			all = append(all, finding{key: string(rune('a' + i))})
		}
		if got := tr.summary(all); !strings.Contains(got, c.want) {
			t.Errorf("summary(german=%v, %d points) = %q, want it to say %q", c.german, c.n, got, c.want)
		}
	}
}
