package admin_test

import (
	"net/http"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// catalogueSite is wt.Site with an approved process skill "seo" attached to the chat
// configuration (uid 1) and nothing attached to four-eyes (uid 2).
const catalogueSite = wt.Site + `
skillSources:
  - {uid: 2, type: backend, title: Site, trustLevel: first_party}
skills:
  - uid: 12
    source: 2
    identifier: seo
    enabled: true
    markdown: "---\nname: SEO optimieren\ndescription: Die Seite verbessern.\nprocess: true\nallowed-tools: [read_page, update_page_metadata]\n---\nEine Änderung pro Schritt."
approvals:
  - {skill: 12, digest: current, approvedBy: 1}
attachments:
  - {configuration: 1, skill: 12, loadMode: always}
`

// The issue: "see the catalogue the slash menu will show for a chosen user".
func TestAdministratorSeesTheSlashMenuOfAChosenUser(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, catalogueSite, nil)
		admin := e.As(wt.Admin)
		names := func(c wt.ProcessCatalogue) []string {
			var out []string
			for _, s := range c.Skills {
				out = append(out, s.Identifier)
			}
			return out
		}
		menu := func(r wt.Response) wt.ProcessCatalogue {
			t.Helper()
			c := wt.Decode[wt.ProcessCatalogue](t, r)
			if c.Skills == nil {
				t.Fatalf("menu without a skills list: %s", r.Body)
			}
			return c
		}
		// What erika's own menu shows is what the administrator sees for her.
		own := menu(e.As(wt.Erika).Must("GET", "/api/configurations/1/process-skills", nil, 200))
		got := menu(admin.Must("GET", "/api/admin/configurations/1/process-skills?user=2", nil, 200))
		if !got.Usable || !equal(names(got), []string{"seo"}) || !equal(names(own), names(got)) {
			t.Errorf("catalogue for erika = %+v, her own %+v, want usable with seo", got, own)
		}
		// A service account's menu is empty.
		if got := menu(admin.Must("GET", "/api/admin/configurations/1/process-skills?user=5", nil, 200)); !got.Usable || len(names(got)) != 0 {
			t.Errorf("catalogue for the service account = %+v, want usable and empty", got)
		}
		// A user outside the allowed groups cannot use the configuration at all.
		admin.Must("PUT", "/api/admin/users/4", map[string]any{"username": "otto"}, 200)
		if got := menu(admin.Must("GET", "/api/admin/configurations/1/process-skills?user=4", nil, 200)); got.Usable || len(names(got)) != 0 {
			t.Errorf("catalogue for a user without the group = %+v, want not usable", got)
		}
		admin.Must("GET", "/api/admin/configurations/999/process-skills?user=2", nil, http.StatusNotFound)
		admin.Must("GET", "/api/admin/configurations/1/process-skills?user=999", nil, http.StatusNotFound)
		refused(t, admin.Do("GET", "/api/admin/configurations/1/process-skills", nil), 400, "user", "without user")
		refused(t, admin.Do("GET", "/api/admin/configurations/1/process-skills?user=x", nil), 400, "user", "user=x")
		e.As(wt.Paula).Must("GET", "/api/admin/configurations/1/process-skills?user=2", nil, http.StatusForbidden)
	})
}
