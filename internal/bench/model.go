package bench

import (
	"fmt"
	"regexp"
	"strconv"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
)

// writesPerTour is how many write cards the model proposes before it closes.
const writesPerTour = 3

var pageRef = regexp.MustCompile(`page (\d+)`)

// fields are proposed in turn, one per card.
var fields = []string{"description", "seoTitle", "keywords"}

// reply is the scripted model: it finds the page in the first user message
// ("… page N …") and proposes writesPerTour metadata writes to it, one per
// reply, then answers with a closing text. It computes the reply from the
// request alone, so any number of conversations share it.
func reply(req llmtest.RecordedRequest) llmtest.Reply {
	page, writes := 0, 0
	for _, m := range req.Messages {
		if m.Role == "user" && page == 0 {
			if sm := pageRef.FindStringSubmatch(m.Content); sm != nil {
				page, _ = strconv.Atoi(sm[1])
			}
		}
		for _, c := range m.ToolCalls {
			if c.Name == "update_page_metadata" {
				writes++
			}
		}
	}
	if page == 0 || writes >= writesPerTour {
		return llmtest.Reply{Content: "Done."}
	}
	f := fields[writes%len(fields)]
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{
		ID:        fmt.Sprintf("w%d", writes+1),
		Name:      "update_page_metadata",
		Arguments: fmt.Sprintf(`{"page": %d, "fields": {%q: "bench value %d"}}`, page, f, len(req.Messages)),
	}}}
}
