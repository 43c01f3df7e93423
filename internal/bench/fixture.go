package bench

import (
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

// token is the API token of editor i (0-based).
func token(i int) string { return fmt.Sprintf("bench-editor-%06d", i) }

// site is a fixture with n editors, each with a page of their own under
// page 1, a configuration "chat" on the model at modelURL and an approved
// process skill attached to it.
func site(n int, modelURL string) string {
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
		fmt.Fprintf(&b, "  - {uid: %d, username: bench-editor-%d, token: %s, groups: [1], backendLanguage: en}\n", firstUser+i, i, token(i))
	}
	b.WriteString("pages:\n  - {uid: 1, pid: 0, title: Home, owner: 1, group: 1, perms: {user: 31, group: 27, everybody: 0}, fields: {description: \"\"}}\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {uid: %d, pid: 1, title: Page %d, owner: %d, group: 1, perms: {user: 31, group: 27, everybody: 0}, fields: {description: \"\"}}\n",
			firstPage+i, i, firstUser+i)
	}
	fmt.Fprintf(&b, `configurations:
  - {uid: 1, identifier: chat, name: Chat, active: true, groups: [1],
     provider: {type: openai, baseUrl: %q, apiKey: sk-bench, model: bench},
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
`, modelURL, skillUID, skillUID, skillUID)
	return b.String()
}
