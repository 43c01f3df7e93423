package bench

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// The fixture's ids: editor i (0-based) is user firstUser+i with page
// firstPage+i; the process skill is skillUID.
const (
	firstPage = 1000
	firstUser = 2
	skillUID  = 12
)

// newTokens are n editors' API tokens, random in every run: a bench
// database's users must not answer to a token anyone can read.
func newTokens(n int) []string {
	t := make([]string, n)
	for i := range t {
		t[i] = "bench-" + randomHex(16)
	}
	return t
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// childEnv is environ without the WAYMARK_ variables.
func childEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "WAYMARK_") {
			out = append(out, kv)
		}
	}
	return out
}

// site is a fixture with an editor for each of tokens, each with a page of
// their own under page 1, a configuration "chat" on the model at modelURL
// (API key apiKey) and an approved process skill attached to it.
func site(tokens []string, modelURL, apiKey string) string {
	n := len(tokens)
	var b strings.Builder
	b.WriteString(`languages:
  - {uid: 0, title: English, locale: en}
groups:
  - {uid: 1, title: Editors, tablesSelect: [pages, tt_content], tablesModify: [pages, tt_content],
     nonExcludeFields: ["pages:description", "pages:seoTitle", "pages:keywords"], languages: [0], mounts: [1], subgroups: []}
users:
  - {uid: 1, username: bench-admin, admin: true, backendLanguage: en}
`)
	for i := range n {
		fmt.Fprintf(&b, "  - {uid: %d, username: bench-editor-%d, token: %s, groups: [1], backendLanguage: en}\n", firstUser+i, i, tokens[i])
	}
	b.WriteString("pages:\n  - {uid: 1, pid: 0, title: Home, owner: 1, group: 1, perms: {user: 31, group: 27, everybody: 0}, fields: {description: \"\"}}\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {uid: %d, pid: 1, title: Page %d, owner: %d, group: 1, perms: {user: 31, group: 27, everybody: 0}, fields: {description: \"\"}}\n",
			firstPage+i, i, firstUser+i)
	}
	fmt.Fprintf(&b, `configurations:
  - {uid: 1, identifier: chat, name: Chat, active: true, groups: [1],
     provider: {type: openai, baseUrl: %q, apiKey: %q, model: bench},
     contextWindow: 32000, maxOutputTokens: 1000, requireSecondApprover: false, privacy: metadata}
skillSources:
  - {uid: 2, type: backend, title: Bench, trustLevel: first_party}
skills:
  - uid: %d
    source: 2
    identifier: seo
    enabled: true
    markdown: "---\nname: SEO\ndescription: Improve the page.\nprocess: true\nallowed-tools: [read_page, update_page_metadata, set_progress]\n---\nOne change per step."
approvals:
  - {skill: %d, digest: current, approvedBy: 1}
attachments:
  - {configuration: 1, skill: %d, loadMode: always}
`, modelURL, "sk-bench-"+apiKey, skillUID, skillUID, skillUID)
	return b.String()
}
