package run

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Privacy is how much of a run's content is stored (DESIGN §5), set per
// configuration. The zero value is not valid; the default is PrivacyMetadata.
type Privacy string

// The privacy levels, from strictest to most revealing.
const (
	PrivacyNone     Privacy = "none"
	PrivacyMetadata Privacy = "metadata"
	PrivacyRedacted Privacy = "redacted"
	PrivacyFull     Privacy = "full"
)

// DefaultPrivacy is the level of a configuration that names none.
const DefaultPrivacy = PrivacyMetadata

// Valid reports whether p is one of the four levels.
func (p Privacy) Valid() bool {
	switch p {
	case PrivacyNone, PrivacyMetadata, PrivacyRedacted, PrivacyFull:
		return true
	}
	return false
}

// ParsePrivacy parses a level name. "" is DefaultPrivacy; any other unknown
// name is an error wrapping ErrInvalid.
func ParsePrivacy(s string) (Privacy, error) {
	if s == "" {
		return DefaultPrivacy, nil
	}
	if p := Privacy(s); p.Valid() {
		return p, nil
	}
	return "", fmt.Errorf("%w: unknown privacy level %q (want none, metadata, redacted or full)", ErrInvalid, s)
}

// StoredAnswer returns what may be stored of a run's final answer: the
// answer is content, so it is kept only at PrivacyFull and is "" otherwise.
func StoredAnswer(p Privacy, answer string) string {
	if p == PrivacyFull {
		return answer
	}
	return ""
}

// Redacted replaces a content string at PrivacyRedacted.
const Redacted = "[redacted]"

// Filter returns what of an event payload may be stored at privacy level p.
// It never changes payload. The rule:
//
//   - lineage payloads (ids and a digest only) are stored whole at every level;
//   - progress (current, total, completed) and highlight (table, uid) keep
//     exactly those keys at every level: they are positions and record
//     identities, never content;
//   - full keeps everything;
//   - redacted keeps the structure, replaces every string below a content key
//     (content, arguments, result, prompt, answer, messages, preview, values,
//     current, proposed, question, text, thinking, raw, error, message, …)
//     with "[redacted]" unless its own key is on the metadata allow-list (a
//     message's role, a call's id or name), and masks e-mail addresses in the
//     other strings;
//   - metadata drops every content key with all it holds, keeps numbers and
//     booleans, and keeps a string only when its key is on the allow-list:
//     ids, uids and uuids, digests, counts, times, names of tools and models,
//     kinds, statuses, reasons, outcomes and table/uid/field/language
//     identities (see metadataKey); lists and objects are filtered
//     element by element;
//   - none stores an empty payload, except for the kinds that must always be
//     stored (status, tool_write, approval, notice), which get the metadata
//     filter.
//
// An invalid level is treated as metadata.
func Filter(p Privacy, kind Kind, payload map[string]any) map[string]any {
	if payload == nil {
		return map[string]any{}
	}
	if kind == EventLineage {
		return payload
	}
	if kind == EventProgress || kind == EventHighlight {
		out := map[string]any{}
		for _, k := range []string{"current", "total", "completed", "table", "uid"} {
			switch v := payload[k].(type) {
			case json.Number, float64, int, int64, bool:
				out[k] = v
			case string:
				if k == "table" {
					out[k] = v
				}
			}
		}
		return out
	}
	switch p {
	case PrivacyFull:
		return payload
	case PrivacyRedacted:
		return redactMap(payload, false)
	case PrivacyNone:
		if !kind.alwaysStored() {
			return map[string]any{}
		}
	}
	return metadataMap(payload)
}

func metadataMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if contentKey(k) {
			continue
		}
		if fv, ok := metadataValue(k, v); ok {
			out[k] = fv
		}
	}
	return out
}

// metadataValue filters v found under key k; ok is false when v is dropped.
func metadataValue(k string, v any) (any, bool) {
	switch v := v.(type) {
	case nil, bool, json.Number, float64, float32, int, int64, int32, uint, uint64, uint32:
		return v, true
	case string:
		return v, metadataKey(k)
	case map[string]any:
		return metadataMap(v), true
	case []any:
		out := make([]any, 0, len(v))
		for _, e := range v {
			if fe, ok := metadataValue(k, e); ok {
				out = append(out, fe)
			}
		}
		return out, true
	case []string:
		if !metadataKey(k) {
			return []string{}, true
		}
		return v, true
	}
	return nil, false
}

func redactMap(m map[string]any, inContent bool) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = redactValue(k, v, inContent || contentKey(k))
	}
	return out
}

var emailPattern = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`)

func redactValue(k string, v any, inContent bool) any {
	switch v := v.(type) {
	case string:
		if inContent && !metadataKey(k) {
			return Redacted
		}
		return emailPattern.ReplaceAllString(v, Redacted)
	case map[string]any:
		return redactMap(v, inContent)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactValue(k, e, inContent)
		}
		return out
	case []string:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactValue(k, e, inContent)
		}
		return out
	}
	return v
}

// normKey lower-cases k and drops "_" and "-", so turnDigest, turn_digest
// and turn-digest are one key.
func normKey(k string) string {
	return keyReplacer.Replace(strings.ToLower(k))
}

// keyReplacer drops the separators normKey ignores; it is immutable.
var keyReplacer = strings.NewReplacer("_", "", "-", "")

// contentKeys name values that are content: prompts, answers, tool arguments
// and results, previews, submitted values.
var contentKeys = map[string]bool{
	"content": true, "arguments": true, "args": true, "toolarguments": true, "result": true,
	"toolresult": true, "prompt": true, "systemprompt": true, "answer": true, "messages": true,
	"messagessent": true, "preview": true, "previews": true, "callpreviews": true, "values": true,
	"value": true, "current": true, "proposed": true, "question": true, "text": true,
	"thinking": true, "raw": true, "output": true, "error": true, "errormessage": true, "instruction": true,
	"message": true, "summary": true, "body": true, "title": true, "description": true,
}

func contentKey(k string) bool { return classify(k).content }

// metadataKeys name strings kept at metadata: identities and enumerations.
var metadataKeys = map[string]bool{
	"id": true, "ids": true, "uid": true, "uids": true, "uuid": true, "callid": true,
	"runuuid": true, "predecessor": true, "carriedfrom": true, "configuration": true,
	"initiator": true, "skill": true, "skills": true, "identifier": true, "processskill": true,
	"digest": true, "turndigest": true, "kind": true, "kinds": true, "type": true,
	"status": true, "reason": true, "reasons": true, "outcome": true, "refusal": true,
	"case": true, "decision": true, "errorclass": true, "finishreason": true, "name": true,
	"tool": true, "toolname": true, "tools": true, "model": true, "provider": true,
	"role": true, "table": true, "tbl": true, "field": true, "fields": true,
	"language": true, "locale": true, "page": true, "effect": true, "completeness": true,
	"writecompleteness": true, "writekind": true, "origin": true, "at": true, "time": true,
}

// metadataSuffixes keep strings whose key ends in one of them in camelCase
// or snake_case: fooId, foo_uid, fooDigest, createdAt, foo_count.
var metadataSuffixes = []string{"Id", "Ids", "Uid", "Uids", "Uuid", "Digest", "At", "Count", "Kind", "Status", "Reason",
	"_id", "_ids", "_uid", "_uids", "_uuid", "_digest", "_at", "_count", "_kind", "_status", "_reason"}

// metadataKey reports whether a string under key k is kept at metadata.
func metadataKey(k string) bool { return classify(k).metadata }

func isMetadataKey(k string) bool {
	if metadataKeys[normKey(k)] {
		return true
	}
	for _, s := range metadataSuffixes {
		if len(k) > len(s) && strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}
