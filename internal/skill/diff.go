package skill

import "strings"

// DiffLine is one line of a line diff: Op is "=" (in both), "-" (only in the
// old text) or "+" (only in the new text).
type DiffLine struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// LineDiff compares two texts line by line through their longest common
// subsequence and returns every line of both in order: kept lines once as
// "=", removed lines as "-" before the added lines "+" that replace them.
// An empty text has no lines; a final newline does not make an empty line.
func LineDiff(oldText, newText string) []DiffLine {
	a, b := splitLines(oldText), splitLines(newText)
	// Trim the common head and tail: edits are usually local, and the table
	// below then covers only the changed middle.
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	out := make([]DiffLine, 0, len(a)+len(b))
	for _, l := range a[:head] {
		out = append(out, DiffLine{"=", l})
	}
	out = append(out, lcsDiff(a[head:len(a)-tail], b[head:len(b)-tail])...)
	for _, l := range a[len(a)-tail:] {
		out = append(out, DiffLine{"=", l})
	}
	return out
}

// lcsDiff is the diff of a and b by the classic LCS table: lcs[i][j] is the
// length of the longest common subsequence of a[i:] and b[j:].
func lcsDiff(a, b []string) []DiffLine {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []DiffLine
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, DiffLine{"=", a[i]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, DiffLine{"-", a[i]})
			i++
		default:
			out = append(out, DiffLine{"+", b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, DiffLine{"-", a[i]})
	}
	for ; j < m; j++ {
		out = append(out, DiffLine{"+", b[j]})
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
