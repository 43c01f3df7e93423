package tool

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"waymark/internal/store"
)

// compileSchema compiles a JSON Schema document (draft 2020-12 unless it says otherwise).
func compileSchema(name string, raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	url := "waymark:tool/" + name + ".json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	return s, nil
}

// ArgsError says which values of a call's arguments break the schema, in
// words the model can act on ("page: missing required property").
type ArgsError struct {
	What     string   // "arguments" (of a call) or "input" (of a user's answer)
	Problems []string // "location: problem", sorted
}

func (e *ArgsError) Error() string {
	return "invalid " + e.What + ": " + strings.Join(e.Problems, "; ")
}

// validateJSON checks the arguments raw against s. An empty raw value counts as {}.
func validateJSON(s *jsonschema.Schema, raw []byte) error { return validateAs(s, raw, "arguments") }

// validateAs checks raw against s, naming the document what in messages.
func validateAs(s *jsonschema.Schema, raw []byte, what string) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return &ArgsError{What: what, Problems: []string{what + ": not a JSON value"}}
	}
	if probs := unstorable(v, what, nil); len(probs) > 0 {
		sort.Strings(probs)
		return &ArgsError{What: what, Problems: compact(probs)}
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return &ArgsError{What: what, Problems: []string{what + ": " + err.Error()}}
	}
	p := message.NewPrinter(language.English)
	var probs []string
	collect(ve, p, what, &probs)
	sort.Strings(probs)
	return &ArgsError{What: what, Problems: compact(probs)}
}

// collect gathers the leaf errors of a validation error as "location: problem".
func collect(e *jsonschema.ValidationError, p *message.Printer, root string, out *[]string) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, p, root, out)
		}
		return
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, location(root, append(slices.Clone(e.InstanceLocation), m))+": missing required property")
		}
	case *kind.AdditionalProperties:
		for _, m := range k.Properties {
			*out = append(*out, location(root, append(slices.Clone(e.InstanceLocation), m))+": unknown property")
		}
	case *kind.Type:
		*out = append(*out, fmt.Sprintf("%s: got %s, want %s", location(root, e.InstanceLocation), k.Got, strings.Join(k.Want, " or ")))
	default:
		*out = append(*out, location(root, e.InstanceLocation)+": "+e.ErrorKind.LocalizedString(p))
	}
}

// location renders an instance path as "fields.description" (root for the document itself).
func location(root string, path []string) string {
	if len(path) == 0 {
		return root
	}
	return strings.Join(path, ".")
}

func compact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// unstorable lists the strings (values and keys) of a decoded JSON value that
// no database stores alike — a NUL byte, bytes that are not UTF-8 — as
// "location: problem": the model reads an error result
// instead of a run failing at its write.
func unstorable(v any, at string, probs []string) []string {
	switch x := v.(type) {
	case string:
		if err := store.CheckText(x); err != nil {
			probs = append(probs, at+": text cannot be stored ("+strings.TrimPrefix(err.Error(), store.ErrInvalidText.Error()+": ")+")")
		}
	case map[string]any:
		for k, e := range x {
			if err := store.CheckText(k); err != nil {
				probs = append(probs, at+": a key whose text cannot be stored")
				continue
			}
			probs = unstorable(e, at+"/"+k, probs)
		}
	case []any:
		for i, e := range x {
			probs = unstorable(e, at+"/"+strconv.Itoa(i), probs)
		}
	}
	return probs
}
