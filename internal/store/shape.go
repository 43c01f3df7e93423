package store

import (
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
)

// shape is what a connection needs to know of a query text to keep its
// statement (serialConnector): whether it holds more than one statement, and
// which parameters SQLite compiles into the statement by value — those
// bound to LIMIT or OFFSET.
type shape struct {
	multi bool
	// fixed are the parameters of LIMIT and OFFSET: an ordinal (?N, or the
	// position of a plain ?) or a name (@name, :name, $name).
	fixed []param
}

type param struct {
	ordinal int
	name    string
}

// stmtKey is the key of query's statement run with args: the text, and the
// values of the parameters SQLite fixes in the statement.
func (sh shape) stmtKey(query string, args []driver.NamedValue) string {
	if len(sh.fixed) == 0 {
		return query
	}
	var b strings.Builder
	b.WriteString(query)
	for _, p := range sh.fixed {
		b.WriteByte(0)
		for _, a := range args {
			if (p.name != "" && a.Name == p.name) || (p.name == "" && a.Name == "" && a.Ordinal == p.ordinal) {
				fmt.Fprint(&b, a.Value)
			}
		}
	}
	return b.String()
}

// shapeOf reads a query text as SQLite's tokenizer would for what shape
// needs: comments (-- and /* */), string literals and quoted identifiers
// are skipped, so a ';' in them does not end a statement; a ';' followed by
// nothing but space and comments is the end of the only statement.
func shapeOf(q string) shape {
	var sh shape
	plain := 0         // plain ? seen so far (SQLite numbers them on from the largest ?N)
	limitNext := false // the last keyword was LIMIT or OFFSET
	ended := false     // a ';' was seen
	for i := 0; i < len(q); {
		ch := q[i]
		switch {
		case ch == '-' && i+1 < len(q) && q[i+1] == '-':
			if j := strings.IndexByte(q[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(q)
			}
			continue
		case ch == '/' && i+1 < len(q) && q[i+1] == '*':
			if j := strings.Index(q[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(q)
			}
			continue
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			i++
			continue
		}
		if ended {
			sh.multi = true // something after a ';'
			return sh
		}
		switch {
		case ch == ';':
			ended = true
			i++
		case ch == '\'' || ch == '"' || ch == '`' || ch == '[':
			end := ch
			if ch == '[' {
				end = ']'
			}
			j := i + 1
			for j < len(q) {
				if q[j] == end {
					if end != ']' && j+1 < len(q) && q[j+1] == end { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			i = j + 1
			limitNext = false
		case ch == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			n := 0
			if j > i+1 {
				n, _ = strconv.Atoi(q[i+1 : j])
				plain = max(plain, n)
			} else {
				plain++
				n = plain
			}
			if limitNext {
				sh.fixed = append(sh.fixed, param{ordinal: n})
			}
			i, limitNext = j, false
		case (ch == '@' || ch == ':' || ch == '$') && i+1 < len(q) && isWordByte(q[i+1]):
			j := i + 1
			for j < len(q) && isWordByte(q[j]) {
				j++
			}
			if limitNext {
				sh.fixed = append(sh.fixed, param{name: q[i+1 : j]})
			}
			i, limitNext = j, false
		case isWordByte(ch):
			j := i
			for j < len(q) && isWordByte(q[j]) {
				j++
			}
			w := q[i:j]
			limitNext = strings.EqualFold(w, "LIMIT") || strings.EqualFold(w, "OFFSET")
			i = j
		default:
			i, limitNext = i+1, false
		}
	}
	return sh
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
