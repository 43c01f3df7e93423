package agent

import (
	"unicode/utf8"

	"waymark/internal/llm"
)

// fitInfo is the context event of one round.
type fitInfo struct {
	Window       int `json:"window"`
	Budget       int `json:"budget"`
	Estimated    int `json:"estimatedTokens"`
	DroppedTurns int `json:"droppedTurns"`
	MessageCount int `json:"messageCount"`
}

// estimate is a conservative token estimate of a message (4 bytes a token plus framing).
func estimate(m llm.Message) int {
	n := utf8.RuneCountInString(m.Content)/3 + 6
	for _, c := range m.ToolCalls {
		n += (len(c.Name)+len(c.Arguments))/3 + 6
	}
	return n
}

// fit builds the messages of one provider call within window−maxOut tokens:
// the system message always, then the newest whole turns (a turn starts at a
// user message). It drops the oldest turns first and never the system message
// or the newest turn; when even that floor does not fit it answers false.
func fit(system string, msgs []llm.Message, tools []llm.ToolSpec, window, maxOut int) ([]llm.Message, fitInfo, bool) {
	budget := window - maxOut
	info := fitInfo{Window: window, Budget: budget}
	fixed := 0
	var head []llm.Message
	if system != "" {
		head = append(head, llm.Message{Role: llm.RoleSystem, Content: system})
		fixed += estimate(head[0])
	}
	for _, t := range tools {
		fixed += (len(t.Name)+len(t.Description)+len(t.Parameters))/3 + 8
	}
	// turn starts
	var starts []int
	for i, m := range msgs {
		if m.Role == llm.RoleUser {
			starts = append(starts, i)
		}
	}
	if len(starts) == 0 || starts[0] != 0 {
		starts = append([]int{0}, starts...)
	}
	sizes := make([]int, len(msgs))
	total := fixed
	for i, m := range msgs {
		sizes[i] = estimate(m)
		total += sizes[i]
	}
	from := 0
	for k := 0; total > budget && k < len(starts)-1; k++ {
		next := starts[k+1]
		for i := from; i < next; i++ {
			total -= sizes[i]
		}
		from = next
		info.DroppedTurns++
	}
	info.Estimated = total
	if total > budget {
		return nil, info, false
	}
	out := append(head, msgs[from:]...)
	info.MessageCount = len(out)
	return out, info, true
}
