// Package demo holds the demo site that `waymark demo` imports into a fresh
// database: a small bilingual company website with deliberate SEO and content
// gaps, users with different mounts and languages, a second approver and a
// service account. It is embedded, so the demo needs nothing but the binary.
package demo

import _ "embed"

// Fixture is the demo site in the fixture format of API.md §2.
//
//go:embed site.yaml
var Fixture []byte

// Login is a demo account printed by `waymark demo`.
type Login struct {
	Username, Password, Token, Role string
}

// Logins lists the demo accounts; they match site.yaml.
func Logins() []Login {
	return []Login{
		{"admin", "admin-demo-pass", "demo-token-admin", "administrator"},
		{"erika", "erika-demo-pass", "demo-token-erika", "editor: the website in English and German; the Services branch read only"},
		{"max", "max-demo-pass", "demo-token-max", "editor: only the Services branch, German only"},
		{"paula", "paula-demo-pass", "demo-token-paula", "editor like erika and second approver (approve grant)"},
		{"importer", "", "demo-token-importer", "service account (token only)"},
	}
}
