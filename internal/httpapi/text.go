package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"unicode/utf8"

	"waymark/internal/store"
)

// invalidText is the answer to text a database cannot store.
func invalidText(where string, err error) error {
	return store.ErrInvalidText.With("%s: %w", where, err)
}

// checkURLText refuses a request whose decoded path or query holds text the
// database cannot store, before any route sees it.
func checkURLText(r *http.Request) error {
	if err := store.CheckText(r.URL.Path); err != nil {
		return invalidText("path", err)
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil // routes that read the query report it
	}
	for k, vs := range q {
		if err := store.CheckText(k); err != nil {
			return invalidText("query", err)
		}
		for _, v := range vs {
			if err := store.CheckText(v); err != nil {
				return invalidText(fmt.Sprintf("query parameter %q", k), err)
			}
		}
	}
	return nil
}

// checkJSONText refuses a JSON body with a string (value or key) that the
// database cannot store. JSON carries a NUL only as the escape \u0000, which
// decodes to a NUL byte; bytes that are not UTF-8 the decoder would replace
// by U+FFFD silently, so they are looked for in the string as sent. A body
// that does not parse is left to the decoder to report.
func checkJSONText(body []byte) error {
	raw := !utf8.Valid(body) // only then is each string's raw text checked
	type frame struct {
		object  bool
		wantKey bool   // in an object: the next string is a key
		key     string // in an object: the key of the value being read
	}
	var stack []frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		from := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil { // io.EOF at the end; a syntax error is the decoder's to report
			return nil
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, frame{object: true, wantKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			n := len(stack)
			key := n > 0 && stack[n-1].object && stack[n-1].wantKey
			err := store.CheckText(v)
			if err == nil && raw && !utf8.Valid(body[from:dec.InputOffset()]) {
				err = fmt.Errorf("%w: not UTF-8", store.ErrInvalidText)
			}
			if err != nil {
				switch {
				case key:
					return invalidText("object key", err)
				case n > 0 && stack[n-1].object:
					return invalidText(fmt.Sprintf("field %q", stack[n-1].key), err)
				}
				return invalidText("request body", err)
			}
			if key {
				stack[n-1].wantKey, stack[n-1].key = false, v
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

// CheckJSONText is checkJSONText for another face of the API (MCP's tool
// arguments): the same refusal, invalid_text, for the same text.
func CheckJSONText(body []byte) error { return checkJSONText(body) }
