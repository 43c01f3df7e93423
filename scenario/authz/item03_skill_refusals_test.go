package authz_test

import (
	"context"
	"net/http"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Every skill route answers a user without the reviewer right 403 before it
// looks anything up — a known and an unknown uid alike, a malformed body too
// — and a refused approval or revocation writes no audit row.
func TestSkillRoutesRefuseNonReviewersBeforeAnyLookup(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		shown, r := e.As(admin).Skill(12)
		if r.Status != http.StatusOK {
			t.Fatalf("GET /api/skills/12 as admin = %d: %s", r.Status, r.Body)
		}
		d := shown.Digest
		md := "---\nname: X\ndescription: Y.\n---\nZ."
		routes := []struct {
			method, known, unknown string
			body                   any
		}{
			{"GET", "/api/skills", "/api/skills", nil},
			{"POST", "/api/skills", "/api/skills", map[string]any{"source": 2, "identifier": "x", "markdown": md}},
			{"GET", "/api/skills/12", "/api/skills/999", nil},
			{"PUT", "/api/skills/12", "/api/skills/999", map[string]any{"markdown": md}},
			{"POST", "/api/skills/12/approve", "/api/skills/999/approve", map[string]any{"digest": d}},
			{"POST", "/api/skills/12/approve", "/api/skills/999/approve", "{"},
			{"POST", "/api/skills/12/revoke", "/api/skills/999/revoke", map[string]any{"digest": d}},
			{"POST", "/api/skills/12/revoke", "/api/skills/0/revoke", map[string]any{"digest": "nonsense"}},
			{"POST", "/api/skills/12/enable", "/api/skills/999/enable", nil},
			{"POST", "/api/skills/12/disable", "/api/skills/999/disable", nil},
			{"POST", "/api/configurations/1/skills", "/api/configurations/999/skills", map[string]any{"skill": 12, "loadMode": "always"}},
			{"DELETE", "/api/configurations/1/skills/12", "/api/configurations/1/skills/999", nil},
			{"GET", "/api/skill-sources", "/api/skill-sources", nil},
			{"POST", "/api/skill-sources", "/api/skill-sources", map[string]any{"uid": 2, "type": "backend", "title": "T", "trustLevel": "first_party"}},
			{"POST", "/api/skill-sources/2/sync", "/api/skill-sources/999/sync", nil},
		}
		audit := func() int {
			var n int
			if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM skill_audit").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := audit()
		for _, tok := range []string{erika, bernd, paula, robot} {
			u := e.As(tok)
			for _, rt := range routes {
				a, b := u.Do(rt.method, rt.known, rt.body), u.Do(rt.method, rt.unknown, rt.body)
				if a.Status != http.StatusForbidden || b.Status != http.StatusForbidden || string(a.Body) != string(b.Body) {
					t.Errorf("%s %s as %s: %d %s; %s: %d %s — want 403 alike", rt.method, rt.known, tok, a.Status, a.Body,
						rt.unknown, b.Status, b.Body)
				}
			}
		}
		if n := audit(); n != before {
			t.Errorf("refusals wrote %d audit rows, want none", n-before)
		}
		k, r := e.As(admin).Skill(12)
		if r.Status != http.StatusOK || k.Digest != d || !k.Instructs || len(k.Approvals) != 1 || len(k.Audit) != len(shown.Audit) {
			t.Errorf("refusals changed the skill: %d %+v", r.Status, k)
		}
	})
}
