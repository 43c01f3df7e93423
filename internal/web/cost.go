package web

import (
	"strconv"
	"strings"

	"waymark/internal/cost"
)

// costText is a card's or a tour's cost in the reader's words (key names
// which): tokens in and out with thousands grouped, the price to four
// places; "" when nothing was counted.
func costText(me *user, key string, t *cost.Total) string {
	if t == nil || t.PromptTokens+t.CompletionTokens == 0 {
		return ""
	}
	price := strconv.FormatFloat(t.Cost, 'f', 4, 64)
	sep := ","
	if me.T.Lang() == "de" {
		price, sep = strings.Replace(price, ".", ",", 1), "."
	}
	return me.T.Get(key, group(t.PromptTokens, sep), group(t.CompletionTokens, sep), price)
}

// group writes n with sep between groups of three digits.
func group(n int64, sep string) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + sep + s[i:]
	}
	return s
}
