package run

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// referencePayload is the plain rule eventPayload must match: a JSON round
// trip of the payload (numbers kept as written), Filter, and encoding.
func referencePayload(t *testing.T, kind Kind, payload any, p Privacy) []byte {
	t.Helper()
	raw, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(Filter(p, kind, m))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type structPayload struct {
	CallID    string         `json:"callId"`
	Arguments string         `json:"arguments"`
	Count     int            `json:"count"`
	Nested    map[string]any `json:"nested"`
}

// The event encoder skips the JSON round trip where it can; what it stores
// must be what the round trip and the filter give (as JSON values: at full,
// a struct keeps its field order).
func TestEventPayloadEncodingMatchesTheRoundTripRule(t *testing.T) {
	payloads := []any{
		nil,
		map[string]any{},
		map[string]any{"status": StatusWaitingForApproval, "reason": ReasonCompleted, "turnDigest": "sha256:ab", "callCount": 2},
		map[string]any{"callId": "c1", "tool": "update_page_metadata", "isError": false, "arguments": `{"page":1}`,
			"result": json.RawMessage(`{"written":true,"mail":"a@b.de"}`), "completeness": "complete"},
		map[string]any{"finishReason": "stop", "content": "Hallo erika@example.org", "toolCalls": []map[string]any{
			{"callId": "c2", "tool": "read_page", "arguments": `{"page":2}`}}, "toolCallCount": 1, "promptTokens": 50, "ratio": 0.25},
		map[string]any{"skills": []string{"seo", "ton"}, "names": []string{"secret"}, "list": []any{"x", 1, true, nil}},
		map[string]any{"current": 3, "total": 7, "completed": false, "table": "pages", "uid": int64(12), "text": "drop"},
		map[string]any{"step": structPayload{CallID: "c3", Arguments: "x", Count: 4, Nested: map[string]any{"uid": 5, "value": "v"}}},
		structPayload{CallID: "c4", Arguments: "{}", Count: 1},
		map[string]any{"kind": Kind("refusal"), "refusal": "no_access", "big": uint64(1) << 60, "neg": -3, "f": 1e21},
	}
	kinds := []Kind{EventStatus, EventTool, EventLLM, EventProgress, EventHighlight, EventLineage, EventNotice}
	for _, p := range []Privacy{PrivacyNone, PrivacyMetadata, PrivacyRedacted, PrivacyFull} {
		for _, k := range kinds {
			for i, payload := range payloads {
				got, err := eventPayload("r", k, payload, p)
				if err != nil {
					t.Fatalf("%s/%s/#%d: %v", p, k, i, err)
				}
				if want := referencePayload(t, k, payload, p); !sameJSON(t, got, want) {
					t.Errorf("%s/%s/#%d:\n got %s\nwant %s", p, k, i, got, want)
				}
			}
		}
	}
}

func TestEventPayloadRefusesWhatIsNotAJSONObject(t *testing.T) {
	for _, payload := range []any{"text", []any{1}, 3, map[string]any{"f": func() {}}, map[string]any{"nan": nan()}} {
		if _, err := eventPayload("r", EventTool, payload, PrivacyFull); err == nil {
			t.Errorf("payload %#v was accepted", payload)
		}
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	for _, x := range []struct {
		raw []byte
		v   *any
	}{{a, &va}, {b, &vb}} {
		dec := json.NewDecoder(bytes.NewReader(x.raw))
		dec.UseNumber()
		if err := dec.Decode(x.v); err != nil {
			t.Fatalf("%s: %v", x.raw, err)
		}
	}
	return reflect.DeepEqual(va, vb)
}

func nan() float64 { z := 0.0; return z / z }

// generalMetadata is the general path of the metadata level: copy, convert,
// filter, marshal.
func generalMetadata(t *testing.T, m map[string]any) []byte {
	t.Helper()
	g, err := generic(withoutContentKeys(m))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(metadataMap(g.(map[string]any)))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The direct metadata encoder writes byte for byte what the general path
// writes, and declines (for the general path) what it does not write itself.
func TestMetadataEncoderWritesTheBytesOfTheGeneralPath(t *testing.T) {
	payloads := []map[string]any{
		nil,
		{},
		{"status": StatusWaitingForApproval, "reason": ReasonCompleted, "turnDigest": "sha256:ab", "callCount": 2},
		{"callId": "c1", "tool": "update_page_metadata", "isError": false, "arguments": `{"page":1}`, "completeness": "complete"},
		{"finishReason": "stop", "content": "Hallo", "toolCalls": []map[string]any{
			{"callId": "c2", "tool": "read_page", "arguments": `{"page":2}`, "note": "dropped"}}, "toolCallCount": 1, "ratio": 0.25},
		{"skills": []string{"seo", "ton"}, "names": []string{"secret"}, "list": []any{"x", 1, true, nil, map[string]any{"uid": 3}}},
		{"empty": []any{}, "nilList": []any(nil), "nilStrings": []string(nil), "nilMap": map[string]any(nil), "none": nil},
		{"kind": Kind("refusal"), "refusal": "no_access", "big": uint64(1) << 60, "neg": -3, "f": 1e21, "small": 1e-7,
			"i32": int32(-4), "u": uint(5), "u32": uint32(6)},
		{"fields": map[string]any{"description": "text", "uid": int64(9), "Z_id": "z<>&\u2028\u2029\x01\t\"\\é\xff"}},
		{"toolName": "a\u00e9\U0001F600", "table": "pages", "b\nkey": "v", "createdAt": "2026-12-01T00:00:00Z"},
	}
	for i, m := range payloads {
		got, ok := appendMetadataJSON(nil, m)
		if !ok {
			t.Errorf("#%d: declined", i)
			continue
		}
		if want := generalMetadata(t, m); !bytes.Equal(got, want) {
			t.Errorf("#%d:\n got %s\nwant %s", i, got, want)
		}
	}
	for i, m := range []map[string]any{
		{"step": structPayload{CallID: "c"}},
		{"n": json.Number("12")},
		{"extra": json.RawMessage(`{}`)},
		{"f": float32(1.5)},
		{"list": []any{map[string]any{"x": int8(1)}}},
		{"nan": nan()},
	} {
		if _, ok := appendMetadataJSON(nil, m); ok {
			t.Errorf("decline #%d: written directly", i)
		}
	}
}

// Strings are quoted exactly as encoding/json quotes them.
func FuzzAppendJSONStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "<a href='x'>&amp;</a>", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
		"\u2028\u2029", "é漢\U0001F600", "\xff\xfe bad", "a\xc3", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}
