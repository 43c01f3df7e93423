package web

import "net/http"

// mountFunc mounts one route of the UI.
type mountFunc func(pattern string, h func(w http.ResponseWriter, r *http.Request))

// registerAdminSkills mounts the skills and attachments screens (issue 14,
// screens 1 and 2).
func (u *UI) registerAdminSkills(m mountFunc) {}
