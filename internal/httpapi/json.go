package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// MaxBodyBytes is the largest request body DecodeJSON accepts (1 MiB).
const MaxBodyBytes = 1 << 20

// WriteJSON answers with status and v as JSON. v is encoded before anything
// is written, so an encoding error can still become a 500 answer.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode answer: %w", err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// DecodeJSON reads the request body, which must be one JSON value of
// Content-Type application/json, at most MaxBodyBytes (413 body_too_large beyond), with no fields v does
// not have and nothing after it, and no string a database cannot store
// (invalid_text). Every violation is a 400 fault (package fault) with a one-line message.
func DecodeJSON(r *http.Request, v any) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return errBadRequest.With("Content-Type must be application/json, got %q", ct)
	}
	if r.Body == nil {
		return errBadRequest.With("request body is empty")
	}
	tooLarge := errBodyTooLarge
	if r.ContentLength > MaxBodyBytes {
		return tooLarge // refused before reading a byte of it
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return errBadRequest.With("cannot read request body").Wrap(err)
	}
	if len(body) > MaxBodyBytes {
		return tooLarge
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return errBadRequest.With("request body is empty")
	}
	if err := checkJSONText(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errBadRequest.With("%s", describeJSONError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errBadRequest.With("unexpected data after the JSON value")
	}
	return nil
}

// describeJSONError turns a decoding error into one line for the client.
func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: unexpected end of input"
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %q: want %s, got JSON %s", typ.Field, typ.Type, typ.Value)
		}
		return fmt.Sprintf("want %s, got JSON %s", typ.Type, typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	default:
		return "invalid JSON: " + err.Error()
	}
}
