package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"waymark/internal/fault"
	"waymark/internal/httpapi"
)

func TestDecodeJSONAcceptsCharsetAndFillsValue(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("POST", "/", strings.NewReader(` {"a": 1} `))
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	var v struct{ A int }
	if err := httpapi.DecodeJSON(r, &v); err != nil || v.A != 1 {
		t.Errorf("DecodeJSON = %v, %+v, want a=1", err, v)
	}
}

func TestWriteJSONSetsHeadersAndStatus(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	if err := httpapi.WriteJSON(w, http.StatusCreated, map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if w.Code != 201 || w.Header().Get("Content-Type") != "application/json; charset=utf-8" || strings.TrimSpace(w.Body.String()) != `{"n":1}` {
		t.Errorf("WriteJSON wrote %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
	w = httptest.NewRecorder()
	if err := httpapi.WriteJSON(w, http.StatusOK, func() {}); err == nil || w.Body.Len() != 0 {
		t.Errorf("WriteJSON of an unencodable value = %v and wrote %q, want an error and nothing written", err, w.Body.String())
	}
	r := httptest.NewRequest("POST", "/", strings.NewReader(`[]`))
	r.Header.Set("Content-Type", "application/json")
	var v struct{ A int }
	if err := httpapi.DecodeJSON(r, &v); fault.KindOf(err) != fault.Invalid || httpapi.StatusOf(fault.KindOf(err)) != 400 {
		t.Errorf("DecodeJSON of an array into a struct = %v, want a 400 fault", err)
	}
}
