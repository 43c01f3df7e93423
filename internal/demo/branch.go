package demo

import (
	"encoding/json"
	"fmt"
)

// Branch sizes: the generated guide branch of `waymark demo`.
const (
	BranchRoot = 1000 // uid of the branch's root page, below Home
	// DefaultBranchPages is how many pages the branch has below its root
	// unless `waymark demo --demo-pages` says otherwise.
	DefaultBranchPages = 200
	// MaxBranchPages bounds --demo-pages: the pages' uids stay below the
	// content elements' (10000 and up).
	MaxBranchPages = 5000
)

// branchTopics are the subjects the generated pages are about.
var branchTopics = []string{"Accessibility", "Hosting", "Page speed", "Search engines", "Content design",
	"Newsletters", "Online shops", "Data protection", "Image formats", "Analytics"}

// Branch is a generated branch of the demo site, in the fixture format
// (JSON): a guide page below Home with n pages below it, each with
// one text element, so that a campaign over many pages is worth starting.
// Their findings are the dashboard's: half the pages have no description,
// a third of the rest one too short, the others one within the
// recommendation. It is imported beside Fixture by `waymark demo` only; the
// tests of the demo site keep its small tree.
func Branch(n int) []byte {
	perms := map[string]int{"user": 31, "group": 27, "everybody": 1}
	pages := []map[string]any{{"uid": BranchRoot, "pid": 1, "title": "Guide", "language": 0, "owner": 1, "group": 1, "perms": perms,
		"fields": map[string]string{"seoTitle": "Guide – web questions answered by Nordlicht Digital",
			"description": "Short answers to the questions our clients ask most about websites, from hosting and page speed to accessibility and data protection."}}}
	var records []map[string]any
	for i := 1; i <= n; i++ {
		topic := branchTopics[(i-1)%len(branchTopics)]
		title := fmt.Sprintf("%s: question %d", topic, (i-1)/len(branchTopics)+1)
		desc := ""
		switch {
		case i%2 == 0:
		case i%3 == 0:
			desc = topic + "."
		default:
			desc = fmt.Sprintf("What we answer when clients ask about %s: a short guide with the points that matter, examples from our projects and what to do next.", topic)
		}
		uid := BranchRoot + i
		pages = append(pages, map[string]any{"uid": uid, "pid": BranchRoot, "title": title, "language": 0, "owner": 1, "group": 1,
			"perms": perms, "fields": map[string]string{"seoTitle": "", "description": desc}})
		records = append(records, map[string]any{"table": "tt_content", "uid": 10000 + i, "pid": uid, "language": 0,
			"fields": map[string]string{"CType": "text", "header": title,
				"bodytext": fmt.Sprintf("Clients often ask us about %s. Here we explain in plain words what it means for a website of a medium-sized company, what it costs and how we go about it in our projects.", topic)}})
	}
	raw, err := json.Marshal(map[string]any{"pages": pages, "records": records})
	if err != nil {
		panic(err) // maps of strings and numbers always encode
	}
	return raw
}
