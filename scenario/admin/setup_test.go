// Package admin_test proves the administration JSON API
// (configurations, users and groups, runs) through the HTTP API, on SQLite
// and PostgreSQL: every route is for administrators only, bad input is
// refused naming the field and changes nothing, and a provider key is never
// shown again once entered.
package admin_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"waymark/internal/store"
	wt "waymark/internal/waymarktest"
)

func newEnv(t *testing.T, db *store.DB) *wt.Env {
	t.Helper()
	return wt.New(t, db, wt.Site, nil)
}

// unchanged fails the test when GET path answers other than before.
// Before and after stay untyped maps on purpose: a raw snapshot compared as
// a whole also catches a field the typed client does not know.
func unchanged(t *testing.T, c *wt.Client, path string, before map[string]any, what string) {
	t.Helper()
	after := c.Must("GET", path, nil, http.StatusOK).Map(t)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("%s changed %s:\nbefore %v\nafter  %v", what, path, before, after)
	}
}

// refused asserts a 400 (or want) answer whose message names field.
func refused(t *testing.T, r wt.Response, want int, field, what string) {
	t.Helper()
	if r.Status != want {
		t.Errorf("%s = %d, want %d: %s", what, r.Status, want, r.Body)
		return
	}
	if field != "" && !strings.Contains(string(r.Body), field) {
		t.Errorf("%s: message does not name %q: %s", what, field, r.Body)
	}
}
