package run

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// appendMetadataJSON appends the JSON of Filter at PrivacyMetadata applied to
// m — exactly the bytes json.Marshal(metadataMap(generic(m))) gives — without
// building the filtered copy: keys are classified once (keyClasses) and
// values written as they are walked. It reports false, having appended
// nothing of value, when m holds a value it does not write itself (a struct,
// raw JSON, a float that JSON cannot hold): the caller then takes the
// general path, which also reports the errors.
func appendMetadataJSON(buf []byte, m map[string]any) ([]byte, bool) {
	var keyArr [16]string
	keys := keyArr[:0]
	for k := range m {
		if !classify(k).content {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	buf = append(buf, '{')
	first := true
	for _, k := range keys {
		mark := len(buf)
		if !first {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, k)
		buf = append(buf, ':')
		var kept, ok bool
		buf, kept, ok = appendMetadataValue(buf, k, m[k])
		if !ok {
			return buf, false
		}
		if !kept {
			buf = buf[:mark]
			continue
		}
		first = false
	}
	return append(buf, '}'), true
}

// appendMetadataValue appends v found under key k as metadataValue keeps it;
// kept is false when the value is dropped, ok false when v is not a type
// written here.
func appendMetadataValue(buf []byte, k string, v any) (out []byte, kept, ok bool) {
	switch v := v.(type) {
	case nil:
		return append(buf, "null"...), true, true
	case bool:
		return strconv.AppendBool(buf, v), true, true
	case int:
		return strconv.AppendInt(buf, int64(v), 10), true, true
	case int64:
		return strconv.AppendInt(buf, v, 10), true, true
	case int32:
		return strconv.AppendInt(buf, int64(v), 10), true, true
	case uint:
		return strconv.AppendUint(buf, uint64(v), 10), true, true
	case uint64:
		return strconv.AppendUint(buf, v, 10), true, true
	case uint32:
		return strconv.AppendUint(buf, uint64(v), 10), true, true
	case float64:
		b, err := json.Marshal(v) // encoding/json's own float format; NaN and ±Inf fail
		if err != nil {
			return buf, false, false
		}
		return append(buf, b...), true, true
	case string:
		if !classify(k).metadata {
			return buf, false, true
		}
		return appendJSONString(buf, v), true, true
	case Status:
		return appendMetadataValue(buf, k, string(v))
	case Reason:
		return appendMetadataValue(buf, k, string(v))
	case Kind:
		return appendMetadataValue(buf, k, string(v))
	case map[string]any:
		buf, ok = appendMetadataJSON(buf, v)
		return buf, true, ok
	case []any:
		return appendMetadataList(buf, k, v)
	case []map[string]any:
		return appendMetadataList(buf, k, v)
	case []string:
		return appendMetadataList(buf, k, v)
	}
	return buf, false, false
}

// appendMetadataList appends a list filtered element by element (a nil list
// is null, as generic makes it).
func appendMetadataList[E any](buf []byte, k string, v []E) (out []byte, kept, ok bool) {
	if v == nil {
		return append(buf, "null"...), true, true
	}
	buf = append(buf, '[')
	first := true
	for _, e := range v {
		mark := len(buf)
		if !first {
			buf = append(buf, ',')
		}
		var keptE bool
		buf, keptE, ok = appendMetadataValue(buf, k, any(e))
		if !ok {
			return buf, false, false
		}
		if !keptE {
			buf = buf[:mark]
			continue
		}
		first = false
	}
	return append(buf, ']'), true, true
}

// keyClass is what the privacy filters make of a key.
type keyClass struct{ content, metadata bool }

// keyClasses memoizes classify: payload keys come from a small vocabulary,
// and normKey allocates. Bounded: past maxKeyClasses keys are classified
// afresh each time.
var (
	keyClassMu sync.RWMutex
	keyClasses = map[string]keyClass{}
)

const maxKeyClasses = 4096

func classify(k string) keyClass {
	keyClassMu.RLock()
	c, ok := keyClasses[k]
	keyClassMu.RUnlock()
	if ok {
		return c
	}
	c = keyClass{content: contentKeys[normKey(k)], metadata: isMetadataKey(k)}
	keyClassMu.Lock()
	if len(keyClasses) < maxKeyClasses {
		keyClasses[k] = c
	}
	keyClassMu.Unlock()
	return c
}

// appendJSONString appends s quoted as encoding/json quotes it by default
// (HTML-safe, U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD).
func appendJSONString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch b {
			case '\\', '"':
				buf = append(buf, '\\', b)
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
