package web

// registerAdmin mounts the administration home and the configurations,
// users and groups, and runs screens (issue 14, screens 3 to 5).
func (u *UI) registerAdmin(m mountFunc) {}
